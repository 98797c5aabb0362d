import { type Static, Type } from '@sinclair/typebox';
import { PublicCollectible } from './collectibles.js';
import { Envelope, Id, Int, Nullable, Page, PageQuery, StrictObject, Text, Timestamp } from './common.js';
import { PurchaseStatus, Rarity } from './enums.js';

const hex64 = (description: string) =>
  Type.String({ pattern: '^[0-9a-f]{64}$', minLength: 64, maxLength: 64, description });

/** A client seed: the fan's own contribution to the draw's randomness. */
export const ClientSeed = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Any 1-128 printable ASCII characters of your choosing: mixed into every draw of the open, after the server committed to its seed',
  examples: ['my lucky seed 42'],
});

export const Purchase = Type.Object(
  {
    id: Id,
    packId: Id,
    status: Type.Ref(PurchaseStatus),
    price: Int({ description: 'Coins, fixed when the purchase started', examples: [100] }),
    expiresAt: Type.String({
      format: 'date-time',
      maxLength: 30,
      description: 'Until when a pending purchase holds its pack',
    }),
    serverSeedHash: hex64(
      'The SHA-256 (hex) of the secret server seed this pack will be opened with: revealed when it is opened',
    ),
    clientSeed: Nullable(Text(128, { description: 'The client seed given when completing, if any' })),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  { $id: 'Purchase', additionalProperties: false },
);
export type Purchase = Static<typeof Purchase>;

export const UserPack = Type.Object(
  {
    id: Id,
    packId: Id,
    purchaseId: Id,
    createdAt: Timestamp,
    openedAt: Nullable(Timestamp),
  },
  { $id: 'UserPack', additionalProperties: false, description: 'A pack the user owns, opened or not' },
);
export type UserPack = Static<typeof UserPack>;

export const PurchaseResponse = Envelope(Type.Ref(Purchase));
export const CompletedPurchase = Type.Object(
  { purchase: Type.Ref(Purchase), userPack: Type.Ref(UserPack) },
  { $id: 'CompletedPurchase', additionalProperties: false },
);
export const CompletedPurchaseResponse = Envelope(Type.Ref(CompletedPurchase));

export const CompletePurchaseBody = StrictObject(
  { purchaseId: Id, clientSeed: Type.Optional(ClientSeed) },
  {
    $id: 'CompletePurchaseRequest',
    examples: [{ purchaseId: '5b0f3c2e-3f55-4d7e-9a43-0d9b2f1f8e21', clientSeed: 'my lucky seed 42' }],
  },
);
export type CompletePurchaseBody = Static<typeof CompletePurchaseBody>;

export const CancelPurchaseQuery = Type.Object({ purchaseId: Id }, { additionalProperties: false });

export const OpenPackBody = StrictObject(
  {
    userPackId: Type.Optional(
      Type.String({ ...Id, description: 'The owned pack to open; absent: your oldest unopened pack of this kind' }),
    ),
    clientSeed: Type.Optional(ClientSeed),
  },
  {
    $id: 'OpenPackRequest',
    examples: [{}, { userPackId: '0c9f8e55-0f55-4b5b-8f0e-6d8a7d1b9c33', clientSeed: 'my lucky seed 42' }],
  },
);
export type OpenPackBody = Static<typeof OpenPackBody>;

const uniform = (description: string) => Type.Number({ minimum: 0, exclusiveMaximum: 1, description });

export const FairnessPoolEntry = Type.Object(
  {
    collectibleId: Id,
    weight: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 }),
    remaining: Int({ description: 'Copies left before the first draw' }),
  },
  { $id: 'FairnessPoolEntry', additionalProperties: false },
);

export const DrawStep = Type.Object(
  {
    k: Int({ maximum: 99, description: 'The draw number, from 0' }),
    u: uniform('The draw\'s uniform: the first 13 hex digits of HMAC-SHA256(serverSeed, "clientSeed:k"), over 2^52'),
    v: uniform('The serial uniform, from the message "clientSeed:k:serial"'),
    collectibleId: Id,
    unminted: Int({
      minimum: 1,
      description: 'Unminted serials of the drawn entry before this draw (its copies left)',
    }),
    position: Int({ description: 'floor(v * unminted): which unminted serial this copy takes' }),
    serialNumber: Int({ minimum: 1 }),
  },
  { $id: 'DrawStep', additionalProperties: false },
);
export type DrawStep = Static<typeof DrawStep>;

export const FairnessProof = Type.Object(
  {
    serverSeed: hex64(
      'The secret seed, revealed: its SHA-256 is the serverSeedHash published when the purchase started',
    ),
    serverSeedHash: hex64('As published when the purchase started'),
    clientSeed: Text(128),
    pool: Type.Array(Type.Ref(FairnessPoolEntry), {
      maxItems: 1000,
      description: 'The pool before the first draw, in draw order (collectible id, code-point order)',
    }),
    draws: Type.Array(Type.Ref(DrawStep), { maxItems: 100 }),
  },
  {
    $id: 'FairnessProof',
    additionalProperties: false,
    description: 'Everything needed to recompute the draws; docs/fairness.md explains how',
  },
);
export type FairnessProof = Static<typeof FairnessProof>;

export const OpenedItem = Type.Object(
  {
    id: Id,
    collectible: Type.Ref(PublicCollectible),
    serialNumber: Int({ minimum: 1, examples: [12] }),
    editionSize: Int({
      description: 'Serial numbers of this collectible when it was drawn: shown as #serialNumber / editionSize',
      examples: [500],
    }),
  },
  { $id: 'OpenedItem', additionalProperties: false },
);

export const OpenResult = Type.Object(
  {
    userPackId: Id,
    packId: Id,
    openedAt: Timestamp,
    items: Type.Array(Type.Ref(OpenedItem), { maxItems: 100 }),
    fairness: Type.Ref(FairnessProof),
  },
  { $id: 'OpenResult', additionalProperties: false },
);
export type OpenResult = Static<typeof OpenResult>;
export const OpenResultResponse = Envelope(Type.Ref(OpenResult));

export const LockerRoomTotals = Type.Object(
  {
    pulls: Int({ description: 'Collectible copies owned' }),
    byRarity: Type.Object(
      { common: Int(), uncommon: Int(), rare: Int(), epic: Int(), legendary: Int() },
      { additionalProperties: false, description: 'Copies owned per rarity' },
    ),
    points: Int({ description: "The user's score: the points of every copy pulled" }),
    unopenedPacks: Int(),
  },
  { $id: 'LockerRoomTotals', additionalProperties: false },
);
export type LockerRoomTotals = Static<typeof LockerRoomTotals>;
export const LockerRoomTotalsResponse = Envelope(Type.Ref(LockerRoomTotals));

export const Pull = Type.Object(
  {
    id: Id,
    collectible: Type.Ref(PublicCollectible),
    serialNumber: Int({ minimum: 1 }),
    editionSize: Int({ description: "The collectible's serial numbers allocated so far" }),
    packId: Nullable(Id),
    userPackId: Nullable(Type.String({ ...Id, description: 'The open that drew it; null for a copy a reward gave' })),
    grantId: Nullable(
      Type.String({ ...Id, description: 'The reward grant that gave it; null for a copy drawn from a pack' }),
    ),
    pulledAt: Timestamp,
  },
  { $id: 'Pull', additionalProperties: false },
);
export type Pull = Static<typeof Pull>;
export const PullPage = Page(Type.Ref(Pull));
export const PullQuery = PageQuery({ rarity: Type.Optional(Type.Ref(Rarity)), teamId: Type.Optional(Id) });
export type PullQuery = Static<typeof PullQuery>;
export const UserPackParams = Type.Object({ userPackId: Id }, { additionalProperties: false });
