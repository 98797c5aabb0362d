import { type Static, Type } from '@sinclair/typebox';
import { Id, Page, PageQuery, Timestamp } from './common.js';

export const AuditEntryView = Type.Object(
  {
    id: Type.String(),
    actorId: Type.String({ description: 'The user who made the change' }),
    action: Type.String({ examples: ['pack.publish'], description: '`<target>.<action>`: pack.create, pack.update, pack.publish, collectible.update, ...' }),
    targetType: Type.String({ examples: ['pack'] }),
    targetId: Type.String(),
    teamId: Type.Union([Type.String(), Type.Null()]),
    before: Type.Unknown({ description: 'The target before the change (null for a creation)' }),
    after: Type.Unknown({ description: 'The target after the change' }),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);
export type AuditEntryView = Static<typeof AuditEntryView>;

export const AuditLogQuery = PageQuery({ teamId: Type.Optional(Id), targetId: Type.Optional(Id) });
export type AuditLogQuery = Static<typeof AuditLogQuery>;

export const AuditLogPage = Page(AuditEntryView);
