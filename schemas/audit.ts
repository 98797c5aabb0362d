import { type Static, Type } from '@sinclair/typebox';
import { Id, Nullable, Page, PageQuery, Text, Timestamp } from './common.js';
import { AuditTargetType } from './enums.js';

export const AuditEntry = Type.Object(
  {
    id: Id,
    actorId: Type.String({ ...Id, description: 'The user who made the change' }),
    action: Text(64, {
      pattern: '^[a-z_]+(\\.[a-zA-Z_]+)+$',
      examples: ['pack.publish'],
      description:
        '`<target>.<action>`: pack.create, pack.update, pack.publish, pack.addCollectible, collectible.update, team.member.add, ...',
    }),
    targetType: Type.Ref(AuditTargetType),
    targetId: Id,
    teamId: Nullable(Id),
    before: Type.Unknown({
      description:
        'The target before the change (null for a creation): a pack’s fields, the pool entry that changed, a collectible, a team or a membership',
    }),
    after: Type.Unknown({ description: 'The target after the change (null for a removal)' }),
    createdAt: Timestamp,
  },
  { $id: 'AuditEntry', additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogQuery = PageQuery({ teamId: Type.Optional(Id), targetId: Type.Optional(Id) });
export type AuditLogQuery = Static<typeof AuditLogQuery>;

export const AuditLogPage = Page(Type.Ref(AuditEntry));

/** One row to append: what changed, by whom, with the target before and after. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'createdAt'>;
