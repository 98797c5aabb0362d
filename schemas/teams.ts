import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Page, PageQuery, StrictObject, Timestamp } from './common.js';
import { TeamRole } from './user.js';

export const Team = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Type.String({ examples: ['fc-example'] }),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);
export type Team = Static<typeof Team>;

/** [spec] A user's role in one team. */
export const TeamAdmin = Type.Object(
  {
    teamId: Type.String(),
    userId: Type.String(),
    role: TeamRole,
    createdAt: Timestamp,
    addedBy: Type.String({ description: 'The user who added this member' }),
  },
  { additionalProperties: false },
);
export type TeamAdmin = Static<typeof TeamAdmin>;

const slug = Type.String({
  minLength: 1,
  maxLength: 60,
  pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
  description: 'Lowercase letters, digits and single dashes; unique',
  examples: ['fc-example'],
});

export const CreateTeamBody = StrictObject(
  {
    name: Type.String({ minLength: 1, maxLength: 120, pattern: '\\S', examples: ['FC Example'] }),
    slug: Type.Optional(slug),
    ownerUserId: Type.Optional(Type.String({ ...Id, description: 'The first owner; defaults to the caller. Must have signed in before.' })),
  },
  { examples: [{ name: 'FC Example', slug: 'fc-example', ownerUserId: 'alice' }] },
);
export type CreateTeamBody = Static<typeof CreateTeamBody>;

/** [spec] POST /api/admin/teams/{teamId}/members */
export const AddMemberBody = StrictObject(
  {
    userId: Id,
    role: Type.Optional(TeamRole),
  },
  { examples: [{ userId: 'bob', role: 'editor' }, { userId: 'carol' }] },
);
export type AddMemberBody = Static<typeof AddMemberBody>;

export const UpdateMemberBody = StrictObject({ role: TeamRole }, { examples: [{ role: 'owner' }] });
export type UpdateMemberBody = Static<typeof UpdateMemberBody>;

export const TeamParams = Type.Object({ teamId: Id }, { additionalProperties: false });
export const MemberParams = Type.Object({ teamId: Id, userId: Id }, { additionalProperties: false });

export const TeamListQuery = PageQuery({});
export type TeamListQuery = Static<typeof TeamListQuery>;
export const MemberListQuery = PageQuery({ role: Type.Optional(TeamRole) });
export type MemberListQuery = Static<typeof MemberListQuery>;

export const TeamResponse = Envelope(Team);
export const TeamPage = Page(Team);
export const TeamAdminResponse = Envelope(TeamAdmin);
export const TeamAdminPage = Page(TeamAdmin);
