import { randomUUID } from 'node:crypto';
import { collectibles, packPoolEntries, packs } from '../db/schema.js';
import type { DatabaseHandle } from '../plugins/app/database/index.js';

/**
 * Bulk catalog for benchmarks: `active` published packs (each with a 10-entry pool) and
 * `archived` ones, inserted directly in batches (through the API 10,000 packs would take minutes).
 */
export async function seedCatalog(
  db: DatabaseHandle,
  counts: { active: number; archived: number; drafts?: number },
): Promise<{ activeIds: string[]; draftIds: string[]; collectibleIds: string[] }> {
  const now = Date.now();
  const collectibleRows = Array.from({ length: 10 }, (_, i) => ({
    id: randomUUID(),
    name: `Bench card ${i}`,
    description: 'A collectible for benchmarks',
    rarity: (['common', 'uncommon', 'rare', 'epic', 'legendary'] as const)[i % 5],
    points: i * 10,
    createdAt: new Date(now - 100_000 + i),
    updatedAt: new Date(now - 100_000 + i),
  }));
  await db.orm.insert(collectibles).values(collectibleRows);

  const packRow = (status: 'active' | 'archived' | 'draft', i: number) => ({
    id: randomUUID(),
    name: `${status} pack ${i}`,
    description: 'Five cards from the benchmark season, with a realistic description of some length.',
    imageUrl: `https://cdn.example.com/packs/${i}.png`,
    status,
    price: 100 + i,
    cardsPerPack: 5,
    supply: status === 'active' ? 10_000 : null,
    publishedAt: status === 'draft' ? null : new Date(now - 50_000 + i * 10),
    archivedAt: status === 'archived' ? new Date(now - 1000) : null,
    createdAt: new Date(now - 90_000 + i),
    updatedAt: new Date(now - 90_000 + i),
  });
  const active = Array.from({ length: counts.active }, (_, i) => packRow('active', i));
  const drafts = Array.from({ length: counts.drafts ?? 0 }, (_, i) => packRow('draft', i));
  await db.orm.insert(packs).values([...active, ...drafts]);
  for (let start = 0; start < counts.archived; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, counts.archived - start) }, (_, i) =>
      packRow('archived', start + i),
    );
    await db.orm.insert(packs).values(batch);
  }
  const pool = active.flatMap((pack) =>
    collectibleRows.map((collectible, i) => ({
      packId: pack.id,
      collectibleId: collectible.id,
      weight: 1,
      remaining: (1000 / (i + 1)) | 0,
      createdAt: new Date(now),
    })),
  );
  if (pool.length > 0) await db.orm.insert(packPoolEntries).values(pool);
  return {
    activeIds: active.map((p) => p.id),
    draftIds: drafts.map((p) => p.id),
    collectibleIds: collectibleRows.map((c) => c.id),
  };
}
