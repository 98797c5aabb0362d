import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Id, Int, Text } from './common.js';
import { LEDGER_KINDS, ORDER_PROVIDERS, RARITIES } from './enums.js';

/**
 * The domain event log: each change another domain or a team may care about appends one event,
 * in the transaction of the change. Every type's `data` is defined here, once: the append
 * checks it, and consumers (quests, and what reads the log later) read it typed.
 */

/** Enumerations as unions of literals: the append checks data with TypeBox's compiler, which knows these. */
const OneOf = <const T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));
const Rarity = OneOf(RARITIES);
const LedgerKind = OneOf(LEDGER_KINDS);
const OrderProvider = OneOf(ORDER_PROVIDERS);

const PackCount = Type.Object({ packId: Id, count: Int({ minimum: 1 }) }, { additionalProperties: false });
const CollectibleCount = Type.Object(
  { collectibleId: Id, count: Int({ minimum: 1 }) },
  { additionalProperties: false },
);

/** One pulled copy, as a `pack.opened` event carries it. */
export const PulledCopy = Type.Object(
  {
    pullId: Id,
    collectibleId: Id,
    rarity: Rarity,
    points: Int(),
    serialNumber: Int({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type PulledCopy = Static<typeof PulledCopy>;

/** `data` of each event type. */
export const EVENT_DATA = {
  'purchase.completed': Type.Object(
    { purchaseId: Id, packId: Id, price: Int() },
    { additionalProperties: false, description: 'A pack bought: the buyer owns one unopened pack more' },
  ),
  'pack.opened': Type.Object(
    { userPackId: Id, packId: Id, pulls: Type.Array(PulledCopy, { maxItems: 100 }) },
    { additionalProperties: false, description: 'An owned pack opened, with the copies it gave' },
  ),
  'wallet.credited': Type.Object(
    {
      entryId: Id,
      amount: Int({ minimum: 1 }),
      balanceAfter: Int(),
      kind: LedgerKind,
      reference: Type.Union([Text(256), Type.Null()]),
    },
    { additionalProperties: false, description: 'Coins added to a wallet (one ledger entry)' },
  ),
  'wallet.debited': Type.Object(
    {
      entryId: Id,
      amount: Int({ minimum: 1 }),
      balanceAfter: Int(),
      kind: LedgerKind,
      reference: Type.Union([Text(256), Type.Null()]),
    },
    { additionalProperties: false, description: 'Coins taken from a wallet (one ledger entry); `amount` is positive' },
  ),
  'order.fulfilled': Type.Object(
    {
      orderId: Id,
      coins: Int(),
      amount: Type.Union([Int(), Type.Null()]),
      currency: Type.Union([Text(3), Type.Null()]),
      provider: Type.Optional(OrderProvider),
    },
    { additionalProperties: false, description: 'A paid order whose coins were credited' },
  ),
  'order.refunded': Type.Object(
    { orderId: Id, amountRefunded: Int(), coinsTakenBack: Int(), coinsUncollected: Int() },
    { additionalProperties: false, description: 'An order refunded (in part or in full), with the coins taken back' },
  ),
  'pack.published': Type.Object(
    { packId: Id, name: Text(200), price: Int(), supply: Type.Union([Int({ minimum: 1 }), Type.Null()]) },
    { additionalProperties: false, description: 'A pack went on sale' },
  ),
  'member.added': Type.Object(
    { teamId: Id, userId: Id, role: Text(16) },
    { additionalProperties: false, description: 'A user became a member of a team' },
  ),
  'quest.completed': Type.Object(
    { questId: Id, period: Text(32) },
    { additionalProperties: false, description: "A fan completed a quest's criteria for a period" },
  ),
  'reward.granted': Type.Object(
    {
      grantId: Id,
      rewardId: Id,
      sourceKey: Text(300),
      coins: Int(),
      packs: Type.Array(PackCount, { maxItems: 50 }),
      collectibles: Type.Array(CollectibleCount, { maxItems: 50 }),
      /** The points its collectibles added to the fan's score (absent from events written before it was recorded). */
      points: Type.Optional(Int()),
    },
    { additionalProperties: false, description: 'A reward given to a fan by the grant engine' },
  ),
  'reward.revoked': Type.Object(
    { grantId: Id, coinsTakenBack: Int(), coinsUncollected: Int() },
    { additionalProperties: false, description: 'A grant revoked by reversal' },
  ),
  'round.finalized': Type.Object(
    {
      leagueId: Id,
      roundId: Id,
      season: Text(32),
      standingsHash: Text(64),
      entrants: Int(),
    },
    {
      additionalProperties: false,
      description:
        "A league round's standings frozen (its `teamId` is the league's team); read them from the round board",
    },
  ),
} as const satisfies Record<string, TSchema>;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export type EventData<T extends EventType> = Static<(typeof EVENT_DATA)[T]>;

/** An event to append: who it concerns, what it is about, and its typed data. */
export type NewEvent = {
  [T in EventType]: {
    type: T;
    /** The fan the event concerns, if any. */
    userId?: string | null;
    /** The team whose catalog or members it concerns, if any. */
    teamId?: string | null;
    /** The id of what it is about (a purchase, an owned pack, a ledger entry ...). */
    subject: string;
    data: EventData<T>;
  };
}[EventType];

/** An event as read from the log. */
export type DomainEvent = NewEvent & { id: string; occurredAt: Date };
