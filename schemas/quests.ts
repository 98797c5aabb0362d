import { type Static, Type } from '@sinclair/typebox';
import {
  Description,
  Envelope,
  Id,
  Int,
  Name,
  Nullable,
  Page,
  PageQuery,
  RefWithDefault,
  StrictObject,
  Text,
  Timestamp,
} from './common.js';
import {
  QuestActionName,
  QuestCriteriaKind,
  QuestEvent,
  QuestPeriod,
  QuestStatus,
  Rarity,
  StreakUnit,
} from './enums.js';

/** The most collectibles a `collect` quest's set may have. */
export const MAX_COLLECT_SET = 100;
export const MAX_COUNT_TARGET = 100_000;
export const STREAK_LENGTH = { minimum: 2, maximum: 365 } as const;

/** An IANA time zone name; that the tz database knows it is checked by validateQuest. */
const timeZone = Text(64, {
  minLength: 1,
  pattern: '^[A-Za-z][A-Za-z0-9_+\\-]*(/[A-Za-z0-9_+\\-]+)*$',
  description: "IANA time zone of the quest's days and weeks, e.g. `Europe/Paris`; frozen once published",
  examples: ['Europe/Paris'],
});

/** A period's key: `once`, a local date, or an ISO week. */
export const QuestPeriodKey = Text(16, {
  pattern: '^(once|[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-W[0-9]{2})$',
  description: '`once`, a local date `YYYY-MM-DD` (daily quests) or an ISO week `YYYY-Www` (weekly quests)',
  examples: ['2026-11-26', '2026-W48', 'once'],
});

export const QuestEventFilter = StrictObject(
  {
    teamId: Type.Optional(Type.String({ ...Id, description: "The team of the event's pack" })),
    packId: Type.Optional(Type.String({ ...Id, description: 'The pack bought or opened' })),
    collectibleId: Type.Optional(
      Type.String({ ...Id, description: '`collectible.pulled` only: the collectible pulled' }),
    ),
    minRarity: Type.Optional(Type.Ref(Rarity, { description: '`collectible.pulled` only: this rarity or rarer' })),
  },
  { $id: 'QuestEventFilter', description: 'Every field given must match; none given matches every event' },
);
export type QuestEventFilter = Static<typeof QuestEventFilter>;

export const CountCriteria = StrictObject(
  {
    kind: Type.Literal('count'),
    event: Type.Ref(QuestEvent),
    count: Int({ minimum: 1, maximum: MAX_COUNT_TARGET, description: 'Matching events needed' }),
    filter: Type.Optional(Type.Ref(QuestEventFilter)),
  },
  { $id: 'CountCriteria', description: 'N events of a type that match the filter' },
);
export type CountCriteria = Static<typeof CountCriteria>;

export const CollectCriteria = StrictObject(
  {
    kind: Type.Literal('collect'),
    collectibleIds: Type.Array(Id, { minItems: 1, maxItems: MAX_COLLECT_SET, uniqueItems: true }),
  },
  { $id: 'CollectCriteria', description: 'Pull every collectible of the set during the quest' },
);
export type CollectCriteria = Static<typeof CollectCriteria>;

export const StreakCriteria = StrictObject(
  {
    kind: Type.Literal('streak'),
    event: Type.Ref(QuestEvent),
    filter: Type.Optional(Type.Ref(QuestEventFilter)),
    length: Int({ ...STREAK_LENGTH, description: 'Consecutive units needed' }),
    unit: Type.Ref(StreakUnit),
  },
  {
    $id: 'StreakCriteria',
    description: "A matching event on N consecutive local days or ISO weeks of the quest's zone",
  },
);
export type StreakCriteria = Static<typeof StreakCriteria>;

export type QuestCriteria = CountCriteria | CollectCriteria | StreakCriteria;
/** A union discriminated by `kind`: each kind a named schema with exactly its fields. */
export const QuestCriteria = Type.Unsafe<QuestCriteria>({
  $id: 'QuestCriteria',
  type: 'object',
  oneOf: [Type.Ref(CountCriteria), Type.Ref(CollectCriteria), Type.Ref(StreakCriteria)],
  discriminator: { propertyName: 'kind' },
  // An unknown or missing `kind` is reported once, as a field listing the kinds.
  allOf: [{ type: 'object', properties: { kind: Type.Ref(QuestCriteriaKind) }, required: ['kind'] }],
  examples: [
    { kind: 'count', event: 'pack.opened', count: 5 },
    { kind: 'collect', collectibleIds: ['7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60'] },
    { kind: 'streak', event: 'pack.opened', length: 7, unit: 'day' },
  ],
});

const maxCompletions = Int({
  minimum: 1,
  maximum: 1_000_000_000,
  description: 'The most completions, all fans together',
});

export const Quest = Type.Object(
  {
    id: Id,
    teamId: Nullable(Id),
    name: Text(120),
    description: Text(2000),
    status: Type.Ref(QuestStatus),
    criteria: Type.Ref(QuestCriteria),
    period: Type.Ref(QuestPeriod),
    timeZone,
    startsAt: Timestamp,
    endsAt: Nullable(Timestamp),
    rewardId: Id,
    maxCompletions: Nullable(maxCompletions),
    completions: Int({ description: 'Completions so far, all fans and periods together' }),
    createdAt: Timestamp,
    publishedAt: Nullable(Timestamp),
  },
  { $id: 'Quest', additionalProperties: false },
);
export type Quest = Static<typeof Quest>;

export const QuestProgress = Type.Object(
  {
    period: QuestPeriodKey,
    periodEndsAt: Nullable(Timestamp),
    progress: Int({ description: 'Events, collectibles or consecutive units so far (at most `target`)' }),
    target: Int({ minimum: 1 }),
    completed: Type.Boolean(),
    claimed: Type.Boolean({ description: "The period's reward was claimed" }),
    claimable: Type.Boolean({ description: 'Completed, not claimed, and the quest can still reward' }),
  },
  { $id: 'QuestProgress', additionalProperties: false, description: "The signed-in fan's current period" },
);
export type QuestProgress = Static<typeof QuestProgress>;

export const PublicQuest = Type.Object(
  {
    ...Quest.properties,
    progress: Nullable(Type.Ref(QuestProgress, { description: 'null when anonymous' })),
  },
  { $id: 'PublicQuest', additionalProperties: false },
);
export type PublicQuest = Static<typeof PublicQuest>;

const name = Name(120, ['Open 5 packs this week']);
const description = Description(['Open five packs before Sunday night.']);
const startsAt = Type.String({ ...Timestamp, description: 'ISO-8601; now when absent' });
const endsAt = Nullable(Type.String({ ...Timestamp, description: 'ISO-8601, after startsAt; null for no end' }));

export const CreateQuestBody = StrictObject(
  {
    name,
    teamId: Type.Optional(
      Nullable(Type.String({ ...Id, description: 'Owning team; null or absent for a platform quest' })),
    ),
    description: Type.Optional(description),
    criteria: Type.Ref(QuestCriteria),
    period: Type.Optional(RefWithDefault(QuestPeriod, 'once')),
    timeZone: Type.Optional(Type.String({ ...timeZone, default: 'UTC' })),
    startsAt: Type.Optional(startsAt),
    endsAt: Type.Optional(endsAt),
    rewardId: Id,
    maxCompletions: Type.Optional(Nullable(maxCompletions)),
  },
  {
    $id: 'CreateQuestRequest',
    examples: [
      {
        name: 'Open 5 packs this week',
        criteria: { kind: 'count', event: 'pack.opened', count: 5 },
        period: 'weekly',
        timeZone: 'Europe/Paris',
        rewardId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60',
      },
    ],
  },
);
export type CreateQuestBody = Static<typeof CreateQuestBody>;

export const UpdateQuestBody = StrictObject(
  {
    name: Type.Optional(name),
    description: Type.Optional(description),
    criteria: Type.Optional(Type.Ref(QuestCriteria)),
    period: Type.Optional(Type.Ref(QuestPeriod)),
    timeZone: Type.Optional(timeZone),
    startsAt: Type.Optional(startsAt),
    endsAt: Type.Optional(endsAt),
    rewardId: Type.Optional(Id),
    maxCompletions: Type.Optional(Nullable(maxCompletions)),
  },
  {
    $id: 'UpdateQuestRequest',
    minProperties: 1,
    description: 'Once the quest is active only name, description and endsAt can change; once ended, nothing',
    examples: [{ name: 'Open 5 packs this week (extended)' }, { endsAt: '2026-12-31T23:00:00.000Z' }],
  },
);
export type UpdateQuestBody = Static<typeof UpdateQuestBody>;

export const QuestActionBody = StrictObject(
  { action: Type.Ref(QuestActionName) },
  { $id: 'QuestActionRequest', examples: [{ action: 'publish' }] },
);
export type QuestActionBody = Static<typeof QuestActionBody>;

export const QuestParams = Type.Object({ id: Id }, { additionalProperties: false });
export type QuestParams = Static<typeof QuestParams>;

/** The fans' list: active quests, of a team or all. */
export const QuestListQuery = PageQuery({ teamId: Type.Optional(Id) });
export type QuestListQuery = Static<typeof QuestListQuery>;

/** The admin list: every status, or one. */
export const AdminQuestListQuery = PageQuery({
  teamId: Type.Optional(Id),
  status: Type.Optional(Type.Ref(QuestStatus)),
});
export type AdminQuestListQuery = Static<typeof AdminQuestListQuery>;

export const ClaimQuestBody = StrictObject(
  {
    period: Type.Optional(
      Type.String({ ...QuestPeriodKey, description: 'The period to claim; the current one when absent' }),
    ),
  },
  { $id: 'ClaimQuestRequest', examples: [{}, { period: '2026-11-25' }] },
);
export type ClaimQuestBody = Static<typeof ClaimQuestBody>;

export const QuestClaim = Type.Object(
  {
    questId: Id,
    period: QuestPeriodKey,
    grantId: Id,
    created: Type.Boolean({ description: 'false when this period was claimed before (the same grant)' }),
  },
  { $id: 'QuestClaim', additionalProperties: false },
);
export type QuestClaim = Static<typeof QuestClaim>;

export const QuestResponse = Envelope(Type.Ref(Quest));
export const QuestPage = Page(Type.Ref(Quest));
export const PublicQuestResponse = Envelope(Type.Ref(PublicQuest));
export const PublicQuestPage = Page(Type.Ref(PublicQuest));
export const QuestClaimResponse = Envelope(Type.Ref(QuestClaim));
