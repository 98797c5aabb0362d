import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, StrictObject, Text, Timestamp, trimmed } from './common.js';
import { TeamRole, UserRole } from './enums.js';

export const CurrentUser = Type.Object(
  {
    id: Type.String({ ...Id, description: "The identity provider's subject", examples: ['alice'] }),
    displayName: Text(100, { examples: ['Alice'] }),
    isAdmin: Type.Boolean({ description: 'Platform admin (ADMIN_USER_IDS, role admin, or the admin claim)' }),
    teams: Type.Array(Type.Object({ teamId: Id, role: Type.Ref(TeamRole) }, { additionalProperties: false }), {
      maxItems: 1000,
      description: "The caller's roles in teams",
    }),
    createdAt: Timestamp,
  },
  { $id: 'CurrentUser', additionalProperties: false },
);
export type CurrentUser = Static<typeof CurrentUser>;

export const CurrentUserResponse = Envelope(Type.Ref(CurrentUser));

export const UpdateCurrentUserBody = StrictObject(
  {
    displayName: trimmed(
      Type.String({
        minLength: 1,
        maxLength: 100,
        // At least one visible character, no control characters.
        pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$',
        description: 'The name shown to others; kept over the name in later tokens',
        examples: ['Alice Liddell'],
      }),
    ),
  },
  { $id: 'UpdateCurrentUserRequest', examples: [{ displayName: 'Alice Liddell' }] },
);
export type UpdateCurrentUserBody = Static<typeof UpdateCurrentUserBody>;

export const AdminUser = Type.Object(
  {
    id: Type.String({ ...Id, examples: ['alice'] }),
    displayName: Text(100, { examples: ['Alice'] }),
    role: Type.Ref(UserRole),
    createdAt: Timestamp,
    lastSeenAt: Timestamp,
  },
  { $id: 'AdminUser', additionalProperties: false },
);

export const AdminUserResponse = Envelope(Type.Ref(AdminUser));

export const UserIdParams = Type.Object({ userId: Id }, { additionalProperties: false });
