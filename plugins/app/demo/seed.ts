import type { FastifyInstance } from 'fastify';
import type { Rarity } from '../../../schemas/enums.js';
import type { CreatePackBody } from '../../../schemas/packs.js';
import type { Principal } from '../auth/policy.js';
import { ConflictError } from '../errors.js';

/**
 * DEMO_DATA: a small catalog loaded into an empty database at start, so `npm start` shows
 * something real: a few collectibles of each rarity, two active packs and one draft of the
 * platform's, and two teams with their owners, an editor, a viewer, and a pack each.
 *
 * Every row is made as people would make it, through the services: the members sign in, a
 * platform admin creates the teams, adds the members, creates the collectibles and the packs,
 * fills the pools and publishes. So the demo is audited and its serials allocated like any
 * catalog, and the invariant checker finds nothing to report on it.
 */

/** The services the demo is made through. */
export type DemoServices = Pick<FastifyInstance, 'users' | 'teams' | 'collectibles' | 'packs'>;

/** The platform admin who makes the demo; its audit rows name `system` as the actor. */
const SYSTEM: Principal = { id: 'system', isAdmin: true, teamRoles: new Map() };

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

const DEMO_PACKS: (CreatePackBody & { publish: boolean; rarities: Rarity[] })[] = [
  {
    name: 'Season Starter',
    description: 'Five cards from across the club. Every pack has a chance at The Founder.',
    price: 100,
    cardsPerPack: 5,
    publish: true,
    rarities: ['common', 'uncommon', 'rare', 'epic', 'legendary'],
  },
  {
    name: 'Matchday Mini',
    description: 'Three cards, commons and uncommons only: a cheap way in.',
    price: 30,
    cardsPerPack: 3,
    supply: 500,
    publish: true,
    rarities: ['common', 'uncommon'],
  },
  {
    name: 'Legends Box (coming soon)',
    description: 'Rares and up. Still a draft.',
    price: 1000,
    cardsPerPack: 3,
    supply: 100,
    publish: false,
    rarities: ['rare', 'epic', 'legendary'],
  },
];

const DEMO_TEAMS = [
  {
    name: 'Harbour City FC',
    slug: 'harbour-city-fc',
    owner: { userId: 'demo-harbour-owner', displayName: 'Hana (Harbour owner)' },
    members: [{ userId: 'demo-harbour-editor', displayName: 'Eli (Harbour editor)', role: 'editor' }],
    collectibles: [
      { name: 'Harbour Lighthouse Crest', rarity: 'common', points: 5 },
      { name: 'Dockside Derby', rarity: 'rare', points: 40 },
      { name: 'The Anchor (club legend)', rarity: 'legendary', points: 400 },
    ],
  },
  {
    name: 'Northside Athletic',
    slug: 'northside-athletic',
    owner: { userId: 'demo-northside-owner', displayName: 'Noor (Northside owner)' },
    members: [{ userId: 'demo-northside-viewer', displayName: 'Vic (Northside viewer)', role: 'viewer' }],
    collectibles: [
      { name: 'Northside Terrace', rarity: 'common', points: 5 },
      { name: 'Snow Match 1987', rarity: 'epic', points: 110 },
    ],
  },
] as const;

/**
 * Loads the demo catalog when the database has no packs and no collectibles. Returns whether it
 * did. The caller keeps two instances from loading it at once.
 */
export async function loadDemoCatalog(services: DemoServices): Promise<boolean> {
  const [packs, collectibles] = await Promise.all([
    services.packs.listAdmin(SYSTEM, { limit: 1 }),
    services.collectibles.list(SYSTEM, { limit: 1 }),
  ]);
  if (packs.items.length > 0 || collectibles.items.length > 0) return false;

  const created = [];
  for (const item of DEMO_COLLECTIBLES) created.push(await services.collectibles.create(SYSTEM, item));
  for (const { publish, rarities, ...body } of DEMO_PACKS) {
    const pool = created.filter((collectible) => rarities.includes(collectible.rarity));
    await createPack(services, body, pool, publish);
  }
  await loadDemoTeams(services);
  return true;
}

/** Creates a pack, fills its pool with COPIES of each collectible, and publishes it if asked. */
async function createPack(
  services: DemoServices,
  body: CreatePackBody,
  pool: { id: string; rarity: Rarity }[],
  publish: boolean,
): Promise<void> {
  const pack = await services.packs.create(SYSTEM, body);
  for (const collectible of pool) {
    await services.packs.applyAction(SYSTEM, pack.id, {
      action: 'addCollectible',
      collectibleId: collectible.id,
      quantity: COPIES[collectible.rarity],
    });
  }
  if (publish) await services.packs.applyAction(SYSTEM, pack.id, { action: 'publish' });
}

/** Two teams with their owners, an editor and a viewer, and one active pack each. */
async function loadDemoTeams(services: DemoServices): Promise<void> {
  for (const demo of DEMO_TEAMS) {
    // The members sign in first: only a user who has signed in can be given a team role.
    for (const person of [demo.owner, ...demo.members]) {
      await services.users.provision(person.userId, person.displayName);
    }
    let team: { id: string };
    try {
      team = await services.teams.create(SYSTEM, { name: demo.name, slug: demo.slug, ownerUserId: demo.owner.userId });
    } catch (error) {
      // A team of that slug made by hand before the catalog was loaded: it is left as it is.
      if (error instanceof ConflictError && error.code === 'slug_taken') continue;
      throw error;
    }
    for (const member of demo.members) {
      await services.teams.addMember(SYSTEM, team.id, { userId: member.userId, role: member.role });
    }
    const collectibles = [];
    for (const item of demo.collectibles) {
      collectibles.push(
        await services.collectibles.create(SYSTEM, {
          ...item,
          teamId: team.id,
          description: `${demo.name} collectible.`,
        }),
      );
    }
    await createPack(
      services,
      {
        teamId: team.id,
        name: `${demo.name} Matchday Pack`,
        description: `Three cards from ${demo.name}.`,
        price: 50,
        cardsPerPack: 3,
        supply: 1000,
      },
      collectibles,
      true,
    );
  }
}
