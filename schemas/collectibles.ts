import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, NullableString, Page, PageQuery, StrictObject, Timestamp } from './common.js';

export const Rarity = Type.Union(
  [Type.Literal('common'), Type.Literal('uncommon'), Type.Literal('rare'), Type.Literal('epic'), Type.Literal('legendary')],
  { description: 'common, uncommon, rare, epic or legendary' },
);

const name = Type.String({ minLength: 1, maxLength: 120, pattern: '\\S', examples: ['Golden Striker'] });
const description = Type.String({ maxLength: 2000, examples: ['The captain in gold.'] });
const imageUrl = NullableString({ maxLength: 2048, format: 'uri', pattern: '^https?://', description: 'http(s) URL of the artwork' });
const points = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Added to the owner\'s score when drawn' });

/** What anyone may see of a collectible (in a pack's odds). */
export const PublicCollectible = Type.Object(
  {
    id: Type.String(),
    teamId: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    description: Type.String(),
    imageUrl: Type.Union([Type.String(), Type.Null()]),
    rarity: Rarity,
    points: Type.Integer(),
  },
  { additionalProperties: false },
);
export type PublicCollectible = Static<typeof PublicCollectible>;

export const Collectible = Type.Object(
  {
    ...PublicCollectible.properties,
    minted: Type.Integer({ description: 'Copies drawn so far (the last serial number given out)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type Collectible = Static<typeof Collectible>;

export const CreateCollectibleBody = StrictObject(
  {
    name,
    teamId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'Owning team; null or absent for a platform collectible' })),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    rarity: Type.Optional(Rarity),
    points: Type.Optional(points),
  },
  { examples: [{ name: 'Golden Striker', rarity: 'legendary', points: 500, description: 'The captain in gold.' }] },
);
export type CreateCollectibleBody = Static<typeof CreateCollectibleBody>;

export const UpdateCollectibleBody = StrictObject(
  {
    name: Type.Optional(name),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    rarity: Type.Optional(Rarity),
    points: Type.Optional(points),
  },
  { minProperties: 1, examples: [{ points: 750 }] },
);
export type UpdateCollectibleBody = Static<typeof UpdateCollectibleBody>;

export const CollectibleParams = Type.Object({ id: Id }, { additionalProperties: false });

export const CollectibleListQuery = PageQuery({
  teamId: Type.Optional(Id),
  rarity: Type.Optional(Rarity),
});
export type CollectibleListQuery = Static<typeof CollectibleListQuery>;

export const CollectibleResponse = Envelope(Collectible);
export const CollectiblePage = Page(Collectible);
