import { type Static, Type } from '@sinclair/typebox';
import {
  Description,
  Envelope,
  Id,
  ImageUrl,
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
import { Rarity } from './enums.js';

const points = Int({ maximum: 1_000_000, description: "Added to the owner's score when drawn" });

/** What anyone may see of a collectible (in a pack's odds). */
export const PublicCollectible = Type.Object(
  {
    id: Id,
    teamId: Nullable(Id),
    name: Text(120),
    description: Text(2000),
    imageUrl: Nullable(Text(2048)),
    rarity: Type.Ref(Rarity),
    points,
  },
  { $id: 'PublicCollectible', additionalProperties: false },
);
export type PublicCollectible = Static<typeof PublicCollectible>;

export const Collectible = Type.Object(
  {
    ...PublicCollectible.properties,
    minted: Int({ description: 'Copies drawn so far' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Collectible', additionalProperties: false },
);
export type Collectible = Static<typeof Collectible>;

const name = Name(120, ['Golden Striker']);
const description = Description(['The captain in gold.']);
const imageUrl = ImageUrl('http(s) URL of the artwork');

export const CreateCollectibleBody = StrictObject(
  {
    name,
    teamId: Type.Optional(
      Nullable(Type.String({ ...Id, description: 'Owning team; null or absent for a platform collectible' })),
    ),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    rarity: Type.Optional(RefWithDefault(Rarity, 'common')),
    points: Type.Optional(
      Int({ maximum: 1_000_000, default: 0, description: "Added to the owner's score when drawn" }),
    ),
  },
  {
    $id: 'CreateCollectibleRequest',
    examples: [{ name: 'Golden Striker', rarity: 'legendary', points: 500, description: 'The captain in gold.' }],
  },
);
export type CreateCollectibleBody = Static<typeof CreateCollectibleBody>;

export const UpdateCollectibleBody = StrictObject(
  {
    name: Type.Optional(name),
    description: Type.Optional(description),
    imageUrl: Type.Optional(imageUrl),
    rarity: Type.Optional(Type.Ref(Rarity)),
    points: Type.Optional(points),
  },
  { $id: 'UpdateCollectibleRequest', minProperties: 1, examples: [{ points: 750 }] },
);
export type UpdateCollectibleBody = Static<typeof UpdateCollectibleBody>;

export const CollectibleParams = Type.Object({ id: Id }, { additionalProperties: false });

export const CollectibleListQuery = PageQuery({
  teamId: Type.Optional(Id),
  rarity: Type.Optional(Type.Ref(Rarity)),
});
export type CollectibleListQuery = Static<typeof CollectibleListQuery>;

export const CollectibleResponse = Envelope(Type.Ref(Collectible));
export const CollectiblePage = Page(Type.Ref(Collectible));
