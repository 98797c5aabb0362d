import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Timestamp } from './common.js';

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
