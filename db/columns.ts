import type { PublicCollectible } from '../schemas/collectibles.js';
import { collectibles } from './schema.js';

/**
 * The columns of a collectible's public view (schemas/collectibles.ts `PublicCollectible`), for
 * the selects of any domain that joins collectibles: defined once, beside the tables.
 */
export const publicCollectibleColumns = {
  id: collectibles.id,
  teamId: collectibles.teamId,
  name: collectibles.name,
  description: collectibles.description,
  imageUrl: collectibles.imageUrl,
  rarity: collectibles.rarity,
  points: collectibles.points,
} satisfies Record<keyof PublicCollectible, unknown>;
