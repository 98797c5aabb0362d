import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, StrictObject, Timestamp } from './common.js';

export const TeamRole = Type.Union([Type.Literal('owner'), Type.Literal('editor'), Type.Literal('viewer')]);

export const CurrentUser = Type.Object(
  {
    id: Type.String({ description: "The identity provider's subject", examples: ['alice'] }),
    displayName: Type.String({ examples: ['Alice'] }),
    isAdmin: Type.Boolean({ description: 'Platform admin (ADMIN_USER_IDS, role admin, or the admin claim)' }),
    teams: Type.Array(Type.Object({ teamId: Type.String(), role: TeamRole }, { additionalProperties: false }), {
      description: "The caller's roles in teams",
    }),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);
export type CurrentUser = Static<typeof CurrentUser>;

export const CurrentUserResponse = Envelope(CurrentUser);

export const UpdateCurrentUserBody = StrictObject(
  {
    displayName: Type.String({
      minLength: 1,
      maxLength: 100,
      // At least one visible character, no control characters.
      pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$',
      description: 'The name shown to others; kept over the name in later tokens',
      examples: ['Alice Liddell'],
    }),
  },
  { examples: [{ displayName: 'Alice Liddell' }] },
);
export type UpdateCurrentUserBody = Static<typeof UpdateCurrentUserBody>;

export const UserRole = Type.Union([Type.Literal('user'), Type.Literal('admin')], {
  description: '`admin` makes the user a platform admin',
});

export const AdminUserView = Type.Object(
  {
    id: Type.String({ examples: ['alice'] }),
    displayName: Type.String({ examples: ['Alice'] }),
    role: UserRole,
    createdAt: Timestamp,
    lastSeenAt: Timestamp,
  },
  { additionalProperties: false },
);

export const AdminUserResponse = Envelope(AdminUserView);

export const UserIdParams = Type.Object({ userId: Id }, { additionalProperties: false });
