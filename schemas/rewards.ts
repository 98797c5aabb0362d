import { type Static, Type } from '@sinclair/typebox';
import {
  Envelope,
  Id,
  Int,
  Name,
  Nullable,
  Page,
  PageQuery,
  StrictObject,
  Text,
  Timestamp,
  trimmed,
} from './common.js';
import { GrantStatus } from './enums.js';

/** The grant engine's API: rewards (bundles), and the grants that give them. */

/** The most entries of one kind a bundle holds, and the most of one pack or collectible it gives. */
export const MAX_BUNDLE_ENTRIES = 50;
export const MAX_BUNDLE_COUNT = 1000;
/** The most coins one reward gives. */
export const MAX_REWARD_COINS = 10_000_000;
/** The most users one admin grant names. */
export const MAX_GRANT_USERS = 1000;

const count = Int({ minimum: 1, maximum: MAX_BUNDLE_COUNT, description: 'How many' });

export const BundlePack = Type.Object(
  { packId: Id, count },
  { $id: 'BundlePack', additionalProperties: false, description: 'Unopened packs of one kind' },
);
export const BundleCollectible = Type.Object(
  { collectibleId: Id, count },
  { $id: 'BundleCollectible', additionalProperties: false, description: 'Copies of one collectible, serial-numbered' },
);

const bundleFields = {
  coins: Int({ maximum: MAX_REWARD_COINS, description: 'Coins credited to the wallet' }),
  packs: Type.Array(Type.Ref(BundlePack), { maxItems: MAX_BUNDLE_ENTRIES }),
  collectibles: Type.Array(Type.Ref(BundleCollectible), { maxItems: MAX_BUNDLE_ENTRIES }),
};

/** What a reward gives. */
export const RewardBundle = Type.Object(bundleFields, {
  $id: 'RewardBundle',
  additionalProperties: false,
  description: 'Coins, packs and collectibles, as given to each recipient',
});
export type RewardBundle = Static<typeof RewardBundle>;

export const Reward = Type.Object(
  {
    id: Id,
    teamId: Nullable(Type.String({ ...Id, description: 'The owning team; null for a platform reward' })),
    name: Text(120),
    ...bundleFields,
    createdAt: Timestamp,
  },
  { $id: 'Reward', additionalProperties: false },
);
export type Reward = Static<typeof Reward>;

export const CreateRewardBody = StrictObject(
  {
    name: Name(120, ['Weekly quest: 3 wins']),
    teamId: Type.Optional(
      Nullable(Type.String({ ...Id, description: 'Owning team; null or absent for a platform reward' })),
    ),
    coins: Type.Optional(bundleFields.coins),
    packs: Type.Optional(bundleFields.packs),
    collectibles: Type.Optional(bundleFields.collectibles),
  },
  {
    $id: 'CreateRewardRequest',
    examples: [{ name: 'Weekly quest: 3 wins', coins: 100, packs: [{ packId: 'pack-1', count: 1 }] }],
  },
);
export type CreateRewardBody = Static<typeof CreateRewardBody>;

export const RewardParams = Type.Object({ id: Id }, { additionalProperties: false });
export const RewardListQuery = PageQuery({ teamId: Type.Optional(Id) });
export type RewardListQuery = Static<typeof RewardListQuery>;
export const RewardResponse = Envelope(Type.Ref(Reward));
export const RewardPage = Page(Type.Ref(Reward));

/** One serial number a grant drew for a copy of a collectible, with what recomputes it. */
export const GrantSerial = Type.Object(
  {
    collectibleId: Id,
    serialNumber: Int({ minimum: 1 }),
    /** The draw's message to HMAC-SHA256 under the block's seed, and its uniform number. */
    message: Text(600),
    v: Type.Number({ minimum: 0, maximum: 1 }),
    unminted: Int(),
    position: Int(),
    serverSeedHash: Text(64),
    serverSeed: Text(64),
  },
  { $id: 'GrantSerial', additionalProperties: false },
);

export const Grant = Type.Object(
  {
    id: Id,
    sourceKey: Text(300, { description: 'Why it was given: granted at most once per key' }),
    userId: Id,
    rewardId: Id,
    reward: Type.Ref(RewardBundle),
    status: Type.Ref(GrantStatus),
    reason: Text(500),
    createdAt: Timestamp,
    revokedAt: Nullable(Timestamp),
    revokeReason: Nullable(Text(500)),
    coinsTakenBack: Int({ description: 'Coins a revocation took back' }),
    coinsUncollected: Int({ description: 'Coins a revocation could not take back: the wallet held less' }),
    packsTakenBack: Int({ description: 'Unopened packs a revocation took back' }),
    packsKept: Int({ description: 'Opened packs a revocation left with the user' }),
    collectiblesKept: Int({ description: 'Collectibles a revocation left with the user' }),
    serials: Type.Array(Type.Ref(GrantSerial), {
      maxItems: MAX_BUNDLE_ENTRIES * MAX_BUNDLE_COUNT,
      description: "The collectibles' serial numbers and how each was drawn",
    }),
  },
  { $id: 'Grant', additionalProperties: false },
);
export type Grant = Static<typeof Grant>;

export const GrantParams = Type.Object({ id: Id }, { additionalProperties: false });
export const GrantListQuery = PageQuery({});
export type GrantListQuery = Static<typeof GrantListQuery>;
export const GrantResponse = Envelope(Type.Ref(Grant));
export const GrantPage = Page(Type.Ref(Grant));

const reason = trimmed(
  Text(500, {
    minLength: 1,
    pattern: '\\S',
    description: 'Why (stored trimmed)',
    examples: ['League round 12 winner'],
  }),
);

export const AdminGrantBody = StrictObject(
  {
    userIds: Type.Array(Id, { minItems: 1, maxItems: MAX_GRANT_USERS, uniqueItems: true }),
    key: Text(100, {
      minLength: 1,
      pattern: '^[A-Za-z0-9._-]+$',
      description: 'Names this grant: each user gets it once per key (source key `admin:{key}:{userId}`)',
      examples: ['outage-2026-11-20'],
    }),
    reason,
  },
  {
    $id: 'AdminGrantRequest',
    examples: [{ userIds: ['fan-1', 'fan-2'], key: 'outage-2026-11-20', reason: 'Compensation for the outage' }],
  },
);
export type AdminGrantBody = Static<typeof AdminGrantBody>;

export const GrantOutcome = Type.Object(
  {
    created: Type.Boolean({ description: 'false when the user had this grant already' }),
    grant: Type.Ref(Grant),
  },
  { $id: 'GrantOutcome', additionalProperties: false },
);
export type GrantOutcome = Static<typeof GrantOutcome>;
export const GrantOutcomesResponse = Envelope(Type.Array(Type.Ref(GrantOutcome), { maxItems: MAX_GRANT_USERS }));

export const RevokeGrantBody = StrictObject(
  { reason },
  { $id: 'RevokeGrantRequest', examples: [{ reason: 'Granted by mistake' }] },
);
export type RevokeGrantBody = Static<typeof RevokeGrantBody>;
