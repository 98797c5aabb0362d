import { type Static, Type } from '@sinclair/typebox';
import { PublicCollectible } from './collectibles.js';
import {
  Description,
  Envelope,
  Id,
  ImageUrl,
  Int,
  Name,
  NextCursor,
  Nullable,
  Page,
  PageQuery,
  StrictObject,
  Text,
  Timestamp,
} from './common.js';
import { PackActionName, PackStatus, Rarity } from './enums.js';

/** The largest pool a pack may have (plugins/app/packs/service.ts refuses more). */
export const MAX_POOL_ENTRIES = 1000;

const price = Int({ maximum: 1_000_000_000, description: 'Integer coins', examples: [100] });
const cardsPerPack = Int({ minimum: 1, maximum: 100, description: 'Draws per opened pack', examples: [5] });
const supply = Nullable(
  Int({ minimum: 1, maximum: 1_000_000_000, description: 'The most packs ever sold; null for no limit' }),
);
const maxPerUser = Nullable(
  Int({
    minimum: 1,
    maximum: 1_000_000,
    description: 'The most packs of it one user may hold reserved or bought; null for no limit',
  }),
);
const available = Int({ description: 'Packs that can still be sold' });
const weight = Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Weight of each copy' });
const probability = Type.Number({ minimum: 0, maximum: 1, description: 'Chance of this entry on the next draw' });

/** [spec] The public view of an active pack. */
export const PublicPack = Type.Object(
  {
    id: Id,
    teamId: Nullable(Id),
    name: Text(120),
    description: Text(2000),
    imageUrl: Nullable(Text(2048)),
    price,
    cardsPerPack,
    available,
    publishedAt: Timestamp,
  },
  { $id: 'PublicPack', additionalProperties: false },
);
export type PublicPack = Static<typeof PublicPack>;

export const PoolEntry = Type.Object(
  {
    collectibleId: Id,
    name: Text(120),
    rarity: Type.Ref(Rarity),
    weight,
    remaining: Int({ description: 'Copies left to draw' }),
    probability,
  },
  { $id: 'PoolEntry', additionalProperties: false },
);

/** The pack's own fields: what the admin views share, and what the audit log records of a pack. */
const packFields = {
  id: Id,
  teamId: Nullable(Id),
  name: Text(120),
  description: Text(2000),
  imageUrl: Nullable(Text(2048)),
  status: Type.Ref(PackStatus),
  price,
  cardsPerPack,
  supply,
  maxPerUser,
  sold: Int({ description: 'Purchases completed, ever' }),
  opened: Int({ description: 'Sold packs opened' }),
  publishedAt: Nullable(Timestamp),
  archivedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

/** The pack as the audit log records it (not a response schema: audit rows are free-form). */
export const PackRecord = Type.Object(packFields, { additionalProperties: false });
export type PackRecord = Static<typeof PackRecord>;

/** The admin view: every field, and the pool. */
export const AdminPack = Type.Object(
  {
    ...packFields,
    available,
    pool: Type.Array(Type.Ref(PoolEntry), {
      maxItems: MAX_POOL_ENTRIES,
      description: 'Ordered by collectible id, the order draws walk',
    }),
  },
  { $id: 'AdminPack', additionalProperties: false },
);
export type AdminPack = Static<typeof AdminPack>;

/** An item of the admin list: the pack without its pool, and the pool's size. */
export const AdminPackSummary = Type.Object(
  {
    ...packFields,
    available,
    poolSize: Int({
      maximum: MAX_POOL_ENTRIES,
      description: 'Entries in the pool; GET /api/admin/packs/{id} shows them',
    }),
  },
  { $id: 'AdminPackSummary', additionalProperties: false },
);
export type AdminPackSummary = Static<typeof AdminPackSummary>;

export const PackParams = Type.Object({ id: Id }, { additionalProperties: false });

/** [spec] GET /api/packs */
/** The public catalog pages more packs at once than the admin lists. */
export const PUBLIC_PACK_PAGE_LIMITS = { default: 100, maximum: 500 } as const;
export const PublicPackListQuery = PageQuery({ teamId: Type.Optional(Id) }, PUBLIC_PACK_PAGE_LIMITS);
export type PublicPackListQuery = Static<typeof PublicPackListQuery>;

export const PublicPackList = Type.Object(
  { packs: Type.Array(Type.Ref(PublicPack), { maxItems: 500 }), nextCursor: NextCursor },
  { additionalProperties: false },
);

export const PackOdds = Type.Object(
  {
    collectible: Type.Ref(PublicCollectible),
    weight,
    remaining: Int({ description: 'Copies left to draw' }),
    probability,
  },
  { $id: 'PackOdds', additionalProperties: false },
);

export const PublicPackDetail = Envelope(
  Type.Object(
    { pack: Type.Ref(PublicPack), odds: Type.Array(Type.Ref(PackOdds), { maxItems: MAX_POOL_ENTRIES }) },
    { additionalProperties: false },
  ),
);

/**
 * [spec] POST /api/admin/packs/{id}: a union discriminated by `action`, each action a named
 * schema with exactly the fields it takes, so that a generated client refuses
 * `{ action: "addCollectible" }` without `collectibleId`, or `{ action: "publish", quantity: 3 }`.
 */
const collectibleId = Type.String({ ...Id, description: 'A collectible of the pack’s team, or a global one' });

const actionSchema = <A extends string, P extends Parameters<typeof StrictObject>[0]>(
  action: A,
  id: string,
  description: string,
  fields: P,
) => StrictObject({ action: Type.Literal(action), ...fields }, { $id: id, description });

export const PublishAction = actionSchema(
  'publish',
  'PublishAction',
  'draft → active; the pool must fill at least one pack',
  {},
);
export const ArchiveAction = actionSchema('archive', 'ArchiveAction', 'draft or active → archived', {});
export const RestoreAction = actionSchema('restore', 'RestoreAction', 'archived → draft', {});
export const AddCollectibleAction = actionSchema(
  'addCollectible',
  'AddCollectibleAction',
  'Draft only: a new entry gets `quantity` (default 1) and `weight` (default 1); an existing entry has the given fields replaced',
  {
    collectibleId,
    quantity: Type.Optional(
      Int({ minimum: 1, maximum: 1_000_000, description: 'Copies in the pool (default 1 for a new entry)' }),
    ),
    weight: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1_000_000,
        description: 'Weight of each copy (default 1 for a new entry)',
      }),
    ),
  },
);
export const RemoveCollectibleAction = actionSchema(
  'removeCollectible',
  'RemoveCollectibleAction',
  'Draft only: takes the entry out of the pool',
  {
    collectibleId,
  },
);

const PACK_ACTION_SCHEMAS = [
  PublishAction,
  ArchiveAction,
  RestoreAction,
  AddCollectibleAction,
  RemoveCollectibleAction,
];

export type PackActionBody = Static<
  | typeof PublishAction
  | typeof ArchiveAction
  | typeof RestoreAction
  | typeof AddCollectibleAction
  | typeof RemoveCollectibleAction
>;
export const PackActionBody = Type.Unsafe<PackActionBody>({
  $id: 'PackActionRequest',
  type: 'object',
  oneOf: PACK_ACTION_SCHEMAS.map((schema) => Type.Ref(schema)),
  discriminator: { propertyName: 'action' },
  // An unknown or missing `action` is reported once, as a field listing the actions.
  allOf: [{ type: 'object', properties: { action: Type.Ref(PackActionName) }, required: ['action'] }],
  examples: [
    { action: 'publish' },
    { action: 'addCollectible', collectibleId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60', quantity: 100, weight: 1 },
    { action: 'removeCollectible', collectibleId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60' },
  ],
});

/** [spec] `{ success: true, data: { success: true, pack } }` */
export const PackActionResponse = Envelope(
  Type.Object({ success: Type.Literal(true), pack: Type.Ref(AdminPack) }, { additionalProperties: false }),
);

const name = Name(120, ['Season 1 Starter']);
const description = Description(['Five cards from the 2026 season.']);
const imageUrl = ImageUrl('http(s) URL of the pack art');

export const CreatePackBody = StrictObject(
  {
    name,
    teamId: Type.Optional(
      Nullable(Type.String({ ...Id, description: 'Owning team; null or absent for a platform pack' })),
    ),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    price: Type.Optional(Int({ maximum: 1_000_000_000, default: 0, description: 'Integer coins' })),
    cardsPerPack: Type.Optional(Int({ minimum: 1, maximum: 100, default: 5, description: 'Draws per opened pack' })),
    supply: Type.Optional(supply),
    maxPerUser: Type.Optional(maxPerUser),
  },
  { $id: 'CreatePackRequest', examples: [{ name: 'Season 1 Starter', price: 100, cardsPerPack: 5, supply: 10000 }] },
);
export type CreatePackBody = Static<typeof CreatePackBody>;

export const UpdatePackBody = StrictObject(
  {
    name: Type.Optional(name),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    price: Type.Optional(price),
    cardsPerPack: Type.Optional(cardsPerPack),
    supply: Type.Optional(supply),
    maxPerUser: Type.Optional(maxPerUser),
  },
  {
    $id: 'UpdatePackRequest',
    minProperties: 1,
    description: 'price, cardsPerPack, supply and maxPerUser can change only while the pack is a draft',
    examples: [{ name: 'Season 1 Starter (reissue)' }, { price: 150, supply: 5000 }],
  },
);
export type UpdatePackBody = Static<typeof UpdatePackBody>;

export const AdminPackListQuery = PageQuery({ status: Type.Optional(Type.Ref(PackStatus)), teamId: Type.Optional(Id) });
export type AdminPackListQuery = Static<typeof AdminPackListQuery>;

export const AdminPackResponse = Envelope(Type.Ref(AdminPack));
export const AdminPackPage = Page(Type.Ref(AdminPackSummary));
