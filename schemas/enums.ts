import { StringEnum } from './common.js';

/**
 * Every enumeration of the API, defined once: the database's check constraints (db/schema.ts),
 * the request and response schemas, and the rules (lifecycle, authorization) all derive from
 * these arrays. Each is a named schema in the OpenAPI document.
 */

export const PACK_STATUSES = ['draft', 'active', 'archived'] as const;
export type PackStatus = (typeof PACK_STATUSES)[number];
export const PackStatus = StringEnum(PACK_STATUSES, {
  $id: 'PackStatus',
  description: '`draft`: being built, not for sale; `active`: listed and sold; `archived`: withdrawn',
});

export const PACK_ACTIONS = ['publish', 'archive', 'restore', 'addCollectible', 'removeCollectible'] as const;
export type PackAction = (typeof PACK_ACTIONS)[number];
export const PackActionName = StringEnum(PACK_ACTIONS, {
  $id: 'PackActionName',
  description:
    'publish: draft→active; archive: draft|active→archived; restore: archived→draft; addCollectible / removeCollectible: edit the pool of a draft',
});

export const RARITIES = ['common', 'uncommon', 'rare', 'epic', 'legendary'] as const;
export type Rarity = (typeof RARITIES)[number];
export const Rarity = StringEnum(RARITIES, { $id: 'Rarity' });

export const TEAM_ROLES = ['owner', 'editor', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];
export const TeamRole = StringEnum(TEAM_ROLES, {
  $id: 'TeamRole',
  description:
    '`owner` manages the team and its members; `editor` runs its packs and collectibles; `viewer` reads its admin views',
});

/** What an audit log row is about. */
export const AUDIT_TARGET_TYPES = [
  'pack',
  'collectible',
  'team',
  'team_member',
  'quest',
  'reward',
  'grant',
  'league',
  'round',
  'app_config',
  'webhook',
] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];
export const AuditTargetType = StringEnum(AUDIT_TARGET_TYPES, {
  $id: 'AuditTargetType',
  description:
    'What the audit row is about: a pack (or its pool), a collectible, a team, a membership, a quest, a reward (created, or granted by an admin), a grant (revoked), a league or a league round (created, changed, scored, finalized), the mobile app configuration (edited), a webhook endpoint (registered, changed, its secret rotated, removed)',
});

export const USER_ROLES = ['user', 'admin'] as const;
export type UserRole = (typeof USER_ROLES)[number];
export const UserRole = StringEnum(USER_ROLES, {
  $id: 'UserRole',
  description: '`admin` makes the user a platform admin',
});

/** Where the database runs: reported by readiness and in the start log. */
export const DATABASE_ENGINES = ['embedded', 'external'] as const;
export type DatabaseEngine = (typeof DATABASE_ENGINES)[number];

/** The SQL list of an enumeration, for a check constraint: `'draft', 'active', 'archived'`. */
export const sqlValues = (values: readonly string[]) =>
  values.map((value) => `'${value.replace(/'/g, "''")}'`).join(', ');

export const PURCHASE_STATUSES = ['pending', 'completed', 'cancelled', 'expired'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];
export const PurchaseStatus = StringEnum(PURCHASE_STATUSES, {
  $id: 'PurchaseStatus',
  description:
    '`pending`: the pack is reserved until `expiresAt`; `completed`: paid, the pack is owned; `cancelled`: released by the buyer; `expired`: not completed in time (a pending purchase past `expiresAt` counts as expired at once)',
});

export const LEDGER_KINDS = ['adjustment', 'purchase', 'reward', 'topup', 'refund', 'revocation'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];
export const LedgerKind = StringEnum(LEDGER_KINDS, {
  $id: 'LedgerKind',
  description:
    '`adjustment`: by a platform admin; `purchase`: a pack bought; `reward`: coins of a reward granted; `topup`: coins bought; `refund`: coins taken back by a refund or dispute; `revocation`: coins of a revoked reward taken back',
});

/** Where a user came from: the external identity provider's tokens, or mobile sign-in (our own sessions). */
export const USER_ORIGINS = ['external', 'mobile'] as const;

/** Sign-in providers of the mobile apps. */
export const MOBILE_PROVIDERS = ['apple', 'google'] as const;
export type MobileProvider = (typeof MOBILE_PROVIDERS)[number];

export const MobileProvider = StringEnum(MOBILE_PROVIDERS, {
  $id: 'MobileProvider',
  description: '`apple`: Sign in with Apple; `google`: Google Sign-In',
});

/** Why a session ended. */
export const SESSION_END_REASONS = [
  'logout',
  'logout_all',
  'revoked',
  'ended_by_user',
  'refresh_reuse',
  'account_deleted',
] as const;

/** An order: pending until paid; then fulfilled (coins credited), or expired or failed; a fulfilled one may be refunded or disputed. */
export const ORDER_STATUSES = ['pending', 'fulfilled', 'expired', 'failed', 'refunded', 'disputed'] as const;

export const OrderStatus = StringEnum(ORDER_STATUSES, {
  $id: 'OrderStatus',
  description:
    '`pending` until paid; `fulfilled` once the coins are credited; `expired` unpaid in time; `failed` when an asynchronous payment failed or a payment could not be credited; `refunded` refunded in full; `disputed` under a dispute, or lost one',
});

/** Who took an order's payment: Stripe Checkout (web), the App Store, or Google Play. */
export const ORDER_PROVIDERS = ['stripe', 'apple', 'google'] as const;
export type OrderProviderName = (typeof ORDER_PROVIDERS)[number];

export const OrderProvider = StringEnum(ORDER_PROVIDERS, {
  $id: 'OrderProvider',
  description:
    '`stripe` (Stripe Checkout, the web), `apple` (the App Store), `google` (Google Play): store orders are fulfilled when the app reports the purchase and have no `priceId`',
});

/** How an App Store Server Notification reached the service: Apple's delivery, or the history the recovery job reads. */
export const APPLE_NOTIFICATION_SOURCES = ['webhook', 'history'] as const;

/** Why a paid order waits for a platform admin. */
export const ORDER_REVIEW_REASONS = [
  'payment_mismatch',
  'no_payment_intent',
  'balance_limit',
  'paid_after_expiry',
  'dispute_return_blocked',
] as const;
export type OrderReviewReason = (typeof ORDER_REVIEW_REASONS)[number];

export const OrderReviewReason = StringEnum(ORDER_REVIEW_REASONS, {
  $id: 'OrderReviewReason',
  description:
    'Why the order was flagged: `payment_mismatch` (the amount or currency paid differs from the order), `no_payment_intent` (the payment names none), `balance_limit` (the wallet could not take the coins), `paid_after_expiry` (paid after the order expired), `dispute_return_blocked` (a won dispute could not return every coin: the wallet was full)',
});

/** Jobs run on a schedule in-process and by `POST /api/cron/{job}`. */
export const CRON_JOBS = [
  'expire-purchases',
  'expire-orders',
  'reconcile-orders',
  'end-quests',
  'advance-rounds',
  'freeze-leaderboards',
  'prune-webhook-deliveries',
  'retry-google-consumes',
  'reconcile-google-voided',
  'recover-apple-notifications',
] as const;

export const CronJob = StringEnum(CRON_JOBS, {
  $id: 'CronJob',
  description:
    '`expire-purchases`: mark pending purchases past their time as expired, and forget idempotency records past their retention; ' +
    '`expire-orders`: settle pending orders past their time (expire their Checkout Session at Stripe, or fulfil one that was paid); ' +
    '`reconcile-orders`: re-check pending orders older than a minute with Stripe and fulfil the paid ones; ' +
    '`end-quests`: end active quests past their `endsAt`, releasing the reward stock they reserved and did not give; ' +
    '`advance-rounds`: record each league round’s status as time moved it, finalize rounds past their `finalizesAt`, and pay the prizes of final rounds not yet paid; ' +
    '`freeze-leaderboards`: rank and freeze the leaderboard windows that have closed (past weeks, finished seasons), after the leaderboards consumer has caught up; ' +
    '`prune-webhook-deliveries`: delete the webhook deliveries (with their attempts) that ended, delivered or failed, more than 30 days ago; ' +
    '`retry-google-consumes`: consume again the Google Play purchases whose consume failed (Google refunds a purchase not consumed within three days); ' +
    '`reconcile-google-voided`: take back the coins of Google Play purchases listed as voided (refunded, charged back, revoked) since its last run, at most every 15 minutes; ' +
    '`recover-apple-notifications`: read the App Store Server Notifications history since the last run and handle any notification the webhook missed',
});

export const JOB_OUTCOMES = ['ok', 'failed'] as const;

/** A grant of the reward engine: given, or revoked by a reversal (never deleted). */
export const GRANT_STATUSES = ['granted', 'revoked'] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];
export const GrantStatus = StringEnum(GRANT_STATUSES, {
  $id: 'GrantStatus',
  description: '`granted`: the reward was given; `revoked`: an admin reversed it (what could be taken back was)',
});

/** A quest: `draft` while it is built; `active` once published (its rules are frozen); `ended` for good. */
export const QUEST_STATUSES = ['draft', 'active', 'ended'] as const;
export type QuestStatus = (typeof QUEST_STATUSES)[number];
export const QuestStatus = StringEnum(QUEST_STATUSES, {
  $id: 'QuestStatus',
  description:
    '`draft`: being built, invisible to fans; `active`: published, its rules frozen; `ended`: over, nothing changes',
});

export const QUEST_ACTIONS = ['publish', 'end'] as const;
export type QuestAction = (typeof QUEST_ACTIONS)[number];
export const QuestActionName = StringEnum(QUEST_ACTIONS, {
  $id: 'QuestActionName',
  description: 'publish: draft→active; end: draft|active→ended',
});

/** How often a fan may complete a quest: its progress restarts at each period. */
export const QUEST_PERIODS = ['once', 'daily', 'weekly'] as const;
export type QuestPeriod = (typeof QUEST_PERIODS)[number];
export const QuestPeriod = StringEnum(QUEST_PERIODS, {
  $id: 'QuestPeriod',
  description:
    "`once`: one period, the whole quest; `daily`: each local day of the quest's time zone; `weekly`: each ISO week (Monday to Sunday, local time)",
});

export const STREAK_UNITS = ['day', 'week'] as const;
export type StreakUnit = (typeof STREAK_UNITS)[number];
export const StreakUnit = StringEnum(STREAK_UNITS, {
  $id: 'StreakUnit',
  description: "Local days, or ISO weeks, of the quest's time zone",
});

/** The events a quest counts. `collectible.pulled` is each pull a `pack.opened` event carries. */
export const QUEST_EVENTS = ['pack.opened', 'collectible.pulled', 'purchase.completed'] as const;
export type QuestEvent = (typeof QUEST_EVENTS)[number];
export const QuestEvent = StringEnum(QUEST_EVENTS, {
  $id: 'QuestEvent',
  description:
    '`pack.opened`: one per pack opened; `collectible.pulled`: one per copy pulled from an opened pack; `purchase.completed`: one per pack bought',
});

export const QUEST_CRITERIA_KINDS = ['count', 'collect', 'streak'] as const;
export type QuestCriteriaKind = (typeof QUEST_CRITERIA_KINDS)[number];
export const QuestCriteriaKind = StringEnum(QUEST_CRITERIA_KINDS, {
  $id: 'QuestCriteriaKind',
  description:
    '`count`: N matching events; `collect`: pull every collectible of a set; `streak`: a matching event on N consecutive days or weeks',
});

/** A league: `active` (rounds may be created) or `archived` (read only). */
export const LEAGUE_STATUSES = ['active', 'archived'] as const;
export type LeagueStatus = (typeof LEAGUE_STATUSES)[number];
export const LeagueStatus = StringEnum(LEAGUE_STATUSES, {
  $id: 'LeagueStatus',
  description: '`active`: rounds may be created; `archived`: no new rounds, everything stays readable',
});

/** A league round, by time: see plugins/app/leagues/rules.ts roundStatusAt. */
export const ROUND_STATUSES = ['upcoming', 'open', 'locked', 'final'] as const;
export type RoundStatus = (typeof ROUND_STATUSES)[number];
export const RoundStatus = StringEnum(ROUND_STATUSES, {
  $id: 'RoundStatus',
  description:
    '`upcoming` before `opensAt`; `open` (lineups accepted) until `locksAt`; `locked` (scores posted) until finalized; `final` (standings frozen)',
});

/** An outbound webhook delivery: waiting for its next attempt, received (2xx), or given up. */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
export const WebhookDeliveryStatus = StringEnum(WEBHOOK_DELIVERY_STATUSES, {
  $id: 'WebhookDeliveryStatus',
  description:
    '`pending`: waiting for its next attempt (`nextAttemptAt`); `delivered`: the endpoint answered 2xx; `failed`: every retry failed, the endpoint answered 410, or the endpoint was disabled (replay it once fixed)',
});

/** How one attempt to deliver ended. */
export const WEBHOOK_ATTEMPT_OUTCOMES = ['delivered', 'failed', 'gone', 'refused'] as const;
export type WebhookAttemptOutcome = (typeof WEBHOOK_ATTEMPT_OUTCOMES)[number];
export const WebhookAttemptOutcome = StringEnum(WEBHOOK_ATTEMPT_OUTCOMES, {
  $id: 'WebhookAttemptOutcome',
  description:
    '`delivered`: a 2xx answer; `failed`: another status, a redirect (never followed), a timeout or a connection error; `gone`: 410 Gone (the endpoint is disabled at once); `refused`: the host resolved to an address outbound webhooks may not reach (loopback, private, link-local, metadata ...)',
});

/** Why an endpoint no longer receives deliveries. */
export const WEBHOOK_DISABLED_REASONS = ['manual', 'gone', 'failing'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];
export const WebhookDisabledReason = StringEnum(WEBHOOK_DISABLED_REASONS, {
  $id: 'WebhookDisabledReason',
  description:
    '`manual`: turned off with `enabled: false`; `gone`: it answered 410 Gone; `failing`: every attempt failed for 5 days',
});
