import { type Static, Type } from '@sinclair/typebox';
import { PublicCollectible, Rarity } from './collectibles.js';
import { Envelope, Id, NullableString, Page, PageQuery, StrictObject, Timestamp } from './common.js';

export const PackStatus = Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('archived')]);

const name = Type.String({ minLength: 1, maxLength: 120, pattern: '\\S', examples: ['Season 1 Starter'] });
const description = Type.String({ maxLength: 2000, examples: ['Five cards from the 2026 season.'] });
const imageUrl = NullableString({ maxLength: 2048, format: 'uri', pattern: '^https?://', description: 'http(s) URL of the pack art' });
const price = Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Integer coins', examples: [100] });
const cardsPerPack = Type.Integer({ minimum: 1, maximum: 100, description: 'Draws per opened pack', examples: [5] });
const supply = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], {
  description: 'The most packs ever sold; null for no limit',
});
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** [spec] The public view of an active pack. */
export const PublicPack = Type.Object(
  {
    id: Type.String(),
    teamId: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    description: Type.String(),
    imageUrl: Type.Union([Type.String(), Type.Null()]),
    price: Type.Integer(),
    cardsPerPack: Type.Integer(),
    available: Type.Integer({ minimum: 0, description: 'Packs that can still be sold' }),
    publishedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type PublicPack = Static<typeof PublicPack>;

export const PoolEntry = Type.Object(
  {
    collectibleId: Type.String(),
    name: Type.String(),
    rarity: Rarity,
    weight: Type.Number({ description: 'Weight of each remaining copy' }),
    remaining: Type.Integer({ minimum: 0 }),
    probability: Type.Number({ minimum: 0, maximum: 1, description: 'Chance of this entry on the next draw' }),
  },
  { additionalProperties: false },
);

/** The admin view: every field, and the pool. */
export const AdminPack = Type.Object(
  {
    id: Type.String(),
    teamId: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    description: Type.String(),
    imageUrl: Type.Union([Type.String(), Type.Null()]),
    status: PackStatus,
    price: Type.Integer(),
    cardsPerPack: Type.Integer(),
    supply: Type.Union([Type.Integer(), Type.Null()]),
    available: Type.Integer({ minimum: 0 }),
    publishedAt: Nullable(Timestamp),
    archivedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    pool: Type.Array(PoolEntry, { description: 'Ordered by collectible id, the order draws walk' }),
  },
  { additionalProperties: false },
);
export type AdminPack = Static<typeof AdminPack>;

export const PackParams = Type.Object({ id: Id }, { additionalProperties: false });

/** [spec] GET /api/packs */
export const PublicPackListQuery = PageQuery({ teamId: Type.Optional(Id) }, { default: 100, maximum: 500 });
export type PublicPackListQuery = Static<typeof PublicPackListQuery>;

export const PublicPackList = Type.Object(
  {
    packs: Type.Array(PublicPack),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
  },
  { additionalProperties: false },
);

export const PackOdds = Type.Object(
  {
    collectible: PublicCollectible,
    weight: Type.Number(),
    remaining: Type.Integer({ minimum: 0 }),
    probability: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false },
);

export const PublicPackDetail = Envelope(
  Type.Object({ pack: PublicPack, odds: Type.Array(PackOdds) }, { additionalProperties: false }),
);

export const PackActionName = Type.Union(
  [
    Type.Literal('publish'),
    Type.Literal('archive'),
    Type.Literal('restore'),
    Type.Literal('addCollectible'),
    Type.Literal('removeCollectible'),
  ],
  { description: 'publish: draft→active; archive: draft|active→archived; restore: archived→draft; addCollectible / removeCollectible: edit the pool of a draft' },
);

const poolActions = ['addCollectible', 'removeCollectible'];

/**
 * [spec] POST /api/admin/packs/{id}. The conditional rules are part of the schema, so the
 * OpenAPI document shows them: collectibleId is required with the two pool actions, and
 * quantity and weight are accepted only with addCollectible.
 */
export const PackActionBody = StrictObject(
  {
    action: PackActionName,
    collectibleId: Type.Optional(Id),
    quantity: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Copies in the pool (addCollectible; default 1 for a new entry)' }),
    ),
    weight: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Weight of each copy (addCollectible; default 1 for a new entry)' }),
    ),
  },
  {
    allOf: [
      {
        if: { properties: { action: { enum: poolActions } }, required: ['action'] },
        then: { required: ['collectibleId'] },
      },
      {
        if: { properties: { action: { not: { enum: poolActions } } }, required: ['action'] },
        then: { properties: { collectibleId: false } },
      },
      {
        if: { properties: { action: { not: { const: 'addCollectible' } } }, required: ['action'] },
        then: { properties: { quantity: false, weight: false } },
      },
    ],
    examples: [
      { action: 'publish' },
      { action: 'archive' },
      { action: 'restore' },
      { action: 'addCollectible', collectibleId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60', quantity: 100, weight: 1 },
      { action: 'removeCollectible', collectibleId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60' },
    ],
  },
);
export type PackActionBody = Static<typeof PackActionBody>;

/** [spec] `{ success: true, data: { success: true, pack } }` */
export const PackActionResponse = Envelope(
  Type.Object({ success: Type.Literal(true), pack: AdminPack }, { additionalProperties: false }),
);

export const CreatePackBody = StrictObject(
  {
    name,
    teamId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'Owning team; null or absent for a platform pack' })),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    price: Type.Optional(price),
    cardsPerPack: Type.Optional(cardsPerPack),
    supply: Type.Optional(supply),
  },
  { examples: [{ name: 'Season 1 Starter', price: 100, cardsPerPack: 5, supply: 10000 }] },
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
  },
  {
    minProperties: 1,
    description: 'price, cardsPerPack and supply can change only while the pack is a draft',
    examples: [{ name: 'Season 1 Starter (reissue)' }, { price: 150, supply: 5000 }],
  },
);
export type UpdatePackBody = Static<typeof UpdatePackBody>;

export const AdminPackListQuery = PageQuery({ status: Type.Optional(PackStatus), teamId: Type.Optional(Id) });
export type AdminPackListQuery = Static<typeof AdminPackListQuery>;

export const AdminPackResponse = Envelope(AdminPack);
export const AdminPackPage = Page(AdminPack);
