import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../app.js';
import { bearer } from './app.js';
import { ADMIN, createCollectible, expectStatus, packInStatus } from './catalog.js';
import { sqlRows } from './economy.js';
import { createReward } from './rewards.js';
import { call, type StaffedTeam, signIn, staffedTeam } from './teams.js';

/**
 * Leagues through the API: a team with its staff, collectibles of every rarity given to fans by
 * an admin grant (real pulls), leagues, rounds, lineups, scores, finalization and the round board.
 */

type Json = Record<string, unknown>;

export const RARITY_ORDER = ['common', 'uncommon', 'rare', 'epic', 'legendary'] as const;

export interface Copy {
  pullId: string;
  collectibleId: string;
  rarity: string;
}

export interface LeagueWorld {
  staff: StaffedTeam;
  /** One collectible per rarity, in RARITY_ORDER, of the team. */
  cards: { id: string; rarity: string }[];
  leagueId: string;
}

/** Seconds from now, as ISO. */
export const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until the instant (ISO) has passed, plus a margin for the database's clock. */
export const waitUntil = async (iso: string, marginMs = 50) => {
  const wait = new Date(iso).getTime() - Date.now() + marginMs;
  if (wait > 0) await sleep(wait);
};

export async function createLeagueRequest(app: App, body: Json, token: string = ADMIN) {
  return call(app, 'POST', '/api/admin/leagues', token, { payload: { name: 'League', season: '2026-27', ...body } });
}

/** A team (owner, editor, viewer), a collectible of each rarity, and a league with `rules`. */
export async function leagueWorld(app: App, prefix: string, rules: Json = { lineupSize: 3, eligible: {} }) {
  const staff = await staffedTeam(app, prefix);
  const cards = [];
  for (const rarity of RARITY_ORDER) {
    const card = await createCollectible(app, { teamId: staff.team.id, rarity, name: `${prefix} ${rarity}` });
    cards.push({ id: card.id, rarity });
  }
  const res = await createLeagueRequest(app, { teamId: staff.team.id, rules });
  expectStatus(res, 201, 'create league');
  return { staff, cards, leagueId: res.json().data.id as string } satisfies LeagueWorld;
}

let grantCounter = 0;

/** Signs the fans in and gives each `copies` copies of every card (an admin grant of a reward). */
export async function giveCards(app: App, world: LeagueWorld, fans: readonly string[], copies = 1): Promise<void> {
  for (const fan of fans) await signIn(app, fan);
  const reward = await createReward(app, {
    teamId: world.staff.team.id,
    collectibles: world.cards.map((card) => ({ collectibleId: card.id, count: copies })),
  });
  grantCounter++;
  const res = await call(app, 'POST', `/api/admin/rewards/${reward.id}/grants`, ADMIN, {
    payload: { userIds: fans, key: `cards-${grantCounter}`, reason: 'league cards' },
  });
  expectStatus(res, 200, 'grant cards');
}

/** The fan's copies of the world's cards, by rarity (RARITY_ORDER), then pull id. */
export async function copiesOf(app: App, userId: string): Promise<Copy[]> {
  const rows = await sqlRows<Copy>(
    app,
    sql`select p.id as "pullId", p.collectible_id as "collectibleId", c.rarity
        from pulls p join collectibles c on c.id = p.collectible_id where p.user_id = ${userId} order by p.id`,
  );
  return rows.sort((a, b) => RARITY_ORDER.indexOf(a.rarity as never) - RARITY_ORDER.indexOf(b.rarity as never));
}

export async function createRoundRequest(app: App, leagueId: string, body: Json, token: string = ADMIN) {
  return call(app, 'POST', `/api/admin/leagues/${encodeURIComponent(leagueId)}/rounds`, token, {
    payload: { name: 'Round', ...body },
  });
}

/** An open round: opened a minute ago, locking `locksIn` seconds from now, ending an hour later unless told. */
export async function openRound(app: App, leagueId: string, locksIn: number, body: Json = {}) {
  const res = await createRoundRequest(app, leagueId, {
    opensAt: inSeconds(-60),
    locksAt: inSeconds(locksIn),
    endsAt: inSeconds(locksIn + 3600),
    ...body,
  });
  expectStatus(res, 201, 'create round');
  return res.json().data as { id: string; locksAt: string; endsAt: string; [key: string]: unknown };
}

export const roundUrl = (leagueId: string, roundId: string) =>
  `/api/leagues/${encodeURIComponent(leagueId)}/rounds/${encodeURIComponent(roundId)}`;
export const adminRoundUrl = (leagueId: string, roundId: string) =>
  `/api/admin/leagues/${encodeURIComponent(leagueId)}/rounds/${encodeURIComponent(roundId)}`;

export function putLineup(app: App, token: string, leagueId: string, roundId: string, pullIds: readonly string[]) {
  return app.inject({
    method: 'PUT',
    url: `${roundUrl(leagueId, roundId)}/lineup`,
    headers: bearer(token),
    payload: { pullIds },
  });
}

export function postScores(app: App, leagueId: string, roundId: string, scores: Json[], token: string = ADMIN) {
  return call(app, 'POST', `${adminRoundUrl(leagueId, roundId)}/scores`, token, { payload: scores });
}

export function finalizeRequest(app: App, leagueId: string, roundId: string, token: string = ADMIN) {
  return call(app, 'POST', `${adminRoundUrl(leagueId, roundId)}/finalize`, token);
}

export interface StandingView {
  rank: number;
  position: number;
  userId: string;
  displayName: string | null;
  score: number;
  best: number;
  submittedAt: string;
  prize: { rewardId: string; grantId: string | null } | null;
}

/** Every page of a round's board: the board info of the first page and all entries. */
export async function wholeBoard(app: App, roundId: string, limit = 2) {
  const entries: StandingView[] = [];
  let cursor: string | null = null;
  let board: Json | undefined;
  do {
    const res: LightMyRequestResponse = await call(app, 'GET', `/api/leaderboards/rounds/${roundId}`, null, {
      query: { limit: String(limit), ...(cursor ? { cursor } : {}) },
    });
    expectStatus(res, 200, 'round board page');
    board ??= res.json().data.board;
    entries.push(...res.json().data.entries);
    cursor = res.json().nextCursor;
  } while (cursor);
  return { board: board as Json, entries };
}

/** The grants paid under a round's source keys. */
export const roundGrants = (app: App, roundId: string) =>
  sqlRows<{ user_id: string; source_key: string; id: string }>(
    app,
    sql`select id, user_id, source_key from grants where source_key like ${`round:${roundId}:%`} order by user_id`,
  );

/** A band 1-1 whose reward is one pack of a pack with a supply of `supply`. */
export async function packBand(app: App, world: LeagueWorld, supply: number) {
  const { pack } = await packInStatus(app, 'active', {
    pack: { teamId: world.staff.team.id, price: 5, cardsPerPack: 1, supply },
    pool: [{ quantity: 20 }],
  });
  const reward = await createReward(app, { teamId: world.staff.team.id, packs: [{ packId: pack.id, count: 1 }] });
  return { packId: pack.id, band: { fromRank: 1, toRank: 1, rewardId: reward.id } };
}
