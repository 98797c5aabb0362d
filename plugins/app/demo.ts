import { randomUUID } from 'node:crypto';
import { count, sql } from 'drizzle-orm';
import fp from 'fastify-plugin';
import { collectibles, packs } from '../../db/schema.js';
import type { Rarity } from '../../schemas/enums.js';
import { recordAudit } from './audit/repository.js';
import { insertCollectible } from './collectibles/repository.js';
import { toCollectible } from './collectibles/service.js';
import type { Database, DatabaseHandle } from './database/index.js';
import { insertPack, poolOf, upsertPoolEntry } from './packs/repository.js';
import { allocateSerials } from './packs/serials-repository.js';
import { toAdminPack } from './packs/service.js';
import { insertMember, insertTeam } from './teams/repository.js';
import { toTeam } from './teams/service.js';
import { insertUser } from './users/repository.js';

/**
 * DEMO_DATA: a small catalog loaded into an empty database at start, so `npm start` shows
 * something real: a few collectibles of each rarity, two active packs and one draft of the
 * platform's, and two teams with their owners, an editor, a viewer, and a pack each.
 */

const DEMO_COLLECTIBLES: { name: string; rarity: Rarity; points: number; description: string }[] = [
  { name: 'Rookie Keeper', rarity: 'common', points: 5, description: 'Safe hands, first season.' },
  { name: 'Academy Winger', rarity: 'common', points: 5, description: 'Fast on the left, faster on the right.' },
  { name: 'Home Kit 2026', rarity: 'common', points: 3, description: 'The shirt, in card form.' },
  { name: 'Stadium at Dusk', rarity: 'uncommon', points: 15, description: 'Forty thousand seats, one sunset.' },
  { name: 'Derby Day Scarf', rarity: 'uncommon', points: 12, description: 'Knitted, signed, slightly muddy.' },
  { name: 'Captain’s Armband', rarity: 'rare', points: 40, description: 'Worn in the cup final.' },
  { name: 'Last-Minute Winner', rarity: 'rare', points: 45, description: 'Minute 94. Top corner.' },
  { name: 'Golden Boot', rarity: 'epic', points: 120, description: 'Thirty-one goals in one season.' },
  { name: 'Invincible Season', rarity: 'epic', points: 150, description: 'Thirty-eight games, no defeat.' },
  { name: 'The Founder', rarity: 'legendary', points: 500, description: 'Where it all began, 1898.' },
];

/** Copies in the pool by rarity: rare cards are rare because there are few copies of them. */
const COPIES: Record<Rarity, number> = { common: 400, uncommon: 120, rare: 30, epic: 8, legendary: 1 };

const SEED_LOCK_KEY = 7_204_117_322;

/** Loads the demo catalog when the database has no packs and no collectibles. Returns whether it did. */
export async function loadDemoCatalog(db: DatabaseHandle): Promise<boolean> {
  return db.transaction(async (tx) => {
    // Instances starting together on one PostgreSQL: the first loads, the others find it loaded.
    await tx.execute(sql`select pg_advisory_xact_lock(${SEED_LOCK_KEY})`);
    const [packCount] = await tx.select({ n: count() }).from(packs);
    const [collectibleCount] = await tx.select({ n: count() }).from(collectibles);
    if ((packCount?.n ?? 0) > 0 || (collectibleCount?.n ?? 0) > 0) return false;

    const now = Date.now();
    // Distinct, increasing timestamps keep the demo's order stable ("newest first").
    const at = (offsetSeconds: number) => new Date(now - 3_600_000 + offsetSeconds * 1000);
    const audit = (action: string, targetType: 'pack' | 'collectible', targetId: string, after: unknown, when: Date) =>
      recordAudit(tx, { actorId: 'system', action, targetType, targetId, teamId: null, before: null, after }, when);

    const created = [];
    for (const [index, item] of DEMO_COLLECTIBLES.entries()) {
      const row = await insertCollectible(tx, {
        id: randomUUID(),
        teamId: null,
        ...item,
        imageUrl: null,
        createdAt: at(index),
        updatedAt: at(index),
      });
      await audit('collectible.create', 'collectible', row.id, toCollectible(row), at(index));
      created.push(row);
    }

    const demoPacks = [
      {
        name: 'Season Starter',
        description: 'Five cards from across the club. Every pack has a chance at The Founder.',
        price: 100,
        cardsPerPack: 5,
        supply: null,
        publish: true,
        pool: created,
      },
      {
        name: 'Matchday Mini',
        description: 'Three cards, commons and uncommons only: a cheap way in.',
        price: 30,
        cardsPerPack: 3,
        supply: 500,
        publish: true,
        pool: created.filter((c) => c.rarity === 'common' || c.rarity === 'uncommon'),
      },
      {
        name: 'Legends Box (coming soon)',
        description: 'Rares and up. Still a draft.',
        price: 1000,
        cardsPerPack: 3,
        supply: 100,
        publish: false,
        pool: created.filter((c) => ['rare', 'epic', 'legendary'].includes(c.rarity)),
      },
    ];
    for (const [index, demo] of demoPacks.entries()) {
      const when = at(100 + index * 10);
      const pack = await insertPack(tx, {
        id: randomUUID(),
        teamId: null,
        name: demo.name,
        description: demo.description,
        imageUrl: null,
        status: demo.publish ? 'active' : 'draft',
        price: demo.price,
        cardsPerPack: demo.cardsPerPack,
        supply: demo.supply,
        publishedAt: demo.publish ? when : null,
        createdAt: when,
        updatedAt: when,
      });
      for (const collectible of demo.pool) {
        await upsertPoolEntry(tx, {
          packId: pack.id,
          collectibleId: collectible.id,
          quantity: COPIES[collectible.rarity],
          now: when,
        });
      }
      const pool = await poolOf(tx, pack.id);
      if (demo.publish) await allocateSerials(tx, pack.id, pool, when);
      await audit('pack.create', 'pack', pack.id, toAdminPack(pack, pool, 0), when);
    }
    await loadDemoTeams(tx, at);
    return true;
  });
}

const DEMO_TEAMS = [
  {
    name: 'Harbour City FC',
    slug: 'harbour-city-fc',
    members: [
      { userId: 'demo-harbour-owner', displayName: 'Hana (Harbour owner)', role: 'owner' },
      { userId: 'demo-harbour-editor', displayName: 'Eli (Harbour editor)', role: 'editor' },
    ],
    collectibles: [
      { name: 'Harbour Lighthouse Crest', rarity: 'common', points: 5 },
      { name: 'Dockside Derby', rarity: 'rare', points: 40 },
      { name: 'The Anchor (club legend)', rarity: 'legendary', points: 400 },
    ],
  },
  {
    name: 'Northside Athletic',
    slug: 'northside-athletic',
    members: [
      { userId: 'demo-northside-owner', displayName: 'Noor (Northside owner)', role: 'owner' },
      { userId: 'demo-northside-viewer', displayName: 'Vic (Northside viewer)', role: 'viewer' },
    ],
    collectibles: [
      { name: 'Northside Terrace', rarity: 'common', points: 5 },
      { name: 'Snow Match 1987', rarity: 'epic', points: 110 },
    ],
  },
] as const;

/** Two teams with their owners, an editor and a viewer, and one active pack each. */
async function loadDemoTeams(tx: Database, at: (offsetSeconds: number) => Date): Promise<void> {
  for (const [teamIndex, demo] of DEMO_TEAMS.entries()) {
    const when = at(200 + teamIndex * 20);
    const team = await insertTeam(tx, { id: randomUUID(), name: demo.name, slug: demo.slug, createdAt: when });
    if (!team) continue;
    for (const member of demo.members) {
      await insertUser(tx, { id: member.userId, displayName: member.displayName, createdAt: when, lastSeenAt: when });
      await insertMember(tx, {
        teamId: team.id,
        userId: member.userId,
        role: member.role,
        createdAt: when,
        addedBy: 'system',
      });
    }
    const pack = await insertPack(tx, {
      id: randomUUID(),
      teamId: team.id,
      name: `${demo.name} Matchday Pack`,
      description: `Three cards from ${demo.name}.`,
      imageUrl: null,
      status: 'active',
      price: 50,
      cardsPerPack: 3,
      supply: 1000,
      publishedAt: when,
      createdAt: when,
      updatedAt: when,
    });
    for (const item of demo.collectibles) {
      const collectible = await insertCollectible(tx, {
        id: randomUUID(),
        teamId: team.id,
        ...item,
        description: `${demo.name} collectible.`,
        imageUrl: null,
        createdAt: when,
        updatedAt: when,
      });
      await upsertPoolEntry(tx, {
        packId: pack.id,
        collectibleId: collectible.id,
        quantity: COPIES[item.rarity],
        now: when,
      });
    }
    await recordAudit(
      tx,
      {
        actorId: 'system',
        action: 'team.create',
        targetType: 'team',
        targetId: team.id,
        teamId: team.id,
        before: null,
        after: toTeam(team),
      },
      when,
    );
  }
}

export default fp(
  async (fastify) => {
    if (!fastify.config.demoData) return;
    if (await loadDemoCatalog(fastify.db)) {
      fastify.catalogCache.invalidate();
      fastify.log.info('DEMO_DATA: loaded the demo catalog into the empty database');
    }
  },
  { name: 'demo', dependencies: ['db', 'catalog'] },
);
