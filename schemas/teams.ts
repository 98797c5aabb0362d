import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Name, Page, PageQuery, RefWithDefault, StrictObject, Text, Timestamp } from './common.js';
import { TeamRole } from './enums.js';

const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

export const Team = Type.Object(
  {
    id: Id,
    name: Text(120),
    slug: Text(60, { pattern: SLUG_PATTERN, examples: ['fc-example'] }),
    createdAt: Timestamp,
  },
  { $id: 'Team', additionalProperties: false },
);
export type Team = Static<typeof Team>;

/** [spec] A user's role in one team. */
export const TeamAdmin = Type.Object(
  {
    teamId: Id,
    userId: Id,
    role: Type.Ref(TeamRole),
    createdAt: Timestamp,
    addedBy: Type.String({ ...Id, description: 'The user who added this member' }),
  },
  { $id: 'TeamAdmin', additionalProperties: false },
);
export type TeamAdmin = Static<typeof TeamAdmin>;

export const CreateTeamBody = StrictObject(
  {
    name: Name(120, ['FC Example']),
    slug: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        pattern: SLUG_PATTERN,
        description:
          'Lowercase letters, digits and single dashes; unique. Default: made from the name, with a short suffix when taken',
        examples: ['fc-example'],
      }),
    ),
    ownerUserId: Type.Optional(
      Type.String({ ...Id, description: 'The first owner; defaults to the caller. Must have signed in before.' }),
    ),
  },
  { $id: 'CreateTeamRequest', examples: [{ name: 'FC Example', slug: 'fc-example', ownerUserId: 'alice' }] },
);
export type CreateTeamBody = Static<typeof CreateTeamBody>;

/** [spec] POST /api/admin/teams/{teamId}/members */
export const AddMemberBody = StrictObject(
  {
    userId: Id,
    role: Type.Optional(RefWithDefault(TeamRole, 'editor')),
  },
  { $id: 'AddMemberRequest', examples: [{ userId: 'bob', role: 'editor' }, { userId: 'carol' }] },
);
export type AddMemberBody = Static<typeof AddMemberBody>;

export const UpdateMemberBody = StrictObject(
  { role: Type.Ref(TeamRole) },
  { $id: 'UpdateMemberRequest', examples: [{ role: 'owner' }] },
);
export type UpdateMemberBody = Static<typeof UpdateMemberBody>;

export const TeamParams = Type.Object({ teamId: Id }, { additionalProperties: false });
export const MemberParams = Type.Object({ teamId: Id, userId: Id }, { additionalProperties: false });

export const TeamListQuery = PageQuery({});
export type TeamListQuery = Static<typeof TeamListQuery>;
export const MemberListQuery = PageQuery({ role: Type.Optional(Type.Ref(TeamRole)) });
export type MemberListQuery = Static<typeof MemberListQuery>;

export const TeamResponse = Envelope(Type.Ref(Team));
export const TeamPage = Page(Type.Ref(Team));
export const TeamAdminResponse = Envelope(Type.Ref(TeamAdmin));
export const TeamAdminPage = Page(Type.Ref(TeamAdmin));
