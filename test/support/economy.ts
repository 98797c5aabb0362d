import { sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import { bearer, tokenFor } from './app.js';
import { ADMIN, expectStatus } from './catalog.js';

/** Fans, coins, purchases and opens through the API, and the economy's invariants read from the database. */

type Json = Record<string, unknown>;

export interface Fan {
  id: string;
  token: string;
}

export { expectStatus };

/** A fan who has called the API once (users exist from their first request). */
export async function signIn(app: App, id: string): Promise<Fan> {
  const token = tokenFor(id);
  const res = await app.inject({ method: 'GET', url: '/api/user', headers: bearer(token) });
  expectStatus(res, 200, `sign in ${id}`);
  return { id, token };
}

export function adjust(app: App, userId: string, body: Json, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `/api/admin/wallets/${encodeURIComponent(userId)}/adjustments`, headers: { ...bearer(ADMIN), ...headers }, payload: body });
}

/** Credits the fan's wallet with `amount` coins. */
export async function fund(app: App, fan: Fan, amount: number): Promise<void> {
  expectStatus(await adjust(app, fan.id, { amount, reason: 'test funds' }), 201, 'fund');
}

export async function balance(app: App, fan: Fan): Promise<number> {
  const res = await app.inject({ method: 'GET', url: '/api/wallet', headers: bearer(fan.token) });
  expectStatus(res, 200, 'wallet');
  return res.json().data.balance;
}

export function startPurchase(app: App, fan: Fan, packId: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `/api/packs/${encodeURIComponent(packId)}/purchase`, headers: { ...bearer(fan.token), ...headers } });
}

export function completePurchase(app: App, fan: Fan, packId: string, body: Json, headers: Record<string, string> = {}) {
  return app.inject({ method: 'PUT', url: `/api/packs/${encodeURIComponent(packId)}/purchase`, headers: { ...bearer(fan.token), ...headers }, payload: body });
}

export function cancelPurchase(app: App, fan: Fan, packId: string, purchaseId: string) {
  return app.inject({ method: 'DELETE', url: `/api/packs/${encodeURIComponent(packId)}/purchase`, query: { purchaseId }, headers: bearer(fan.token) });
}

export function openPack(app: App, fan: Fan, packId: string, body: Json = {}, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `/api/packs/${encodeURIComponent(packId)}/open`, headers: { ...bearer(fan.token), ...headers }, payload: body });
}

/** Starts and completes a purchase; answers the owned pack's id. */
export async function buyPack(app: App, fan: Fan, packId: string, clientSeed?: string): Promise<{ purchaseId: string; userPackId: string }> {
  const started = await startPurchase(app, fan, packId);
  expectStatus(started, 201, 'start purchase');
  const purchaseId = started.json().data.id as string;
  const completed = await completePurchase(app, fan, packId, { purchaseId, ...(clientSeed ? { clientSeed } : {}) });
  expectStatus(completed, 200, 'complete purchase');
  return { purchaseId, userPackId: completed.json().data.userPack.id };
}

const rows = async <T>(app: App, query: ReturnType<typeof sql>): Promise<T[]> => ((await app.db.orm.execute(query)) as unknown as { rows: T[] }).rows;

/**
 * Every invariant of the economy that the database can be asked about, as a list of violations
 * (empty when all hold): balances equal their ledgers and are never negative; serials unique,
 * within 1..editionSize and counted by minted; remaining + drawn = the copies each serial state
 * covers; no pack sold past its supply or opened more than once.
 */
export async function economyViolations(app: App): Promise<string[]> {
  const problems: string[] = [];
  const found = async (what: string, query: ReturnType<typeof sql>) => {
    for (const row of await rows<Json>(app, query)) problems.push(`${what}: ${JSON.stringify(row)}`);
  };
  await found(
    'balance differs from the sum of its ledger',
    sql`select w.user_id, w.balance, coalesce(sum(l.amount), 0)::int as ledger from wallets w left join wallet_ledger l on l.user_id = w.user_id group by w.user_id, w.balance having w.balance <> coalesce(sum(l.amount), 0) or w.balance < 0`,
  );
  await found('serial outside 1..editionSize', sql`select p.id, p.serial_number, c.edition_size from pulls p join collectibles c on c.id = p.collectible_id where p.serial_number < 1 or p.serial_number > c.edition_size`);
  await found('serial given twice', sql`select collectible_id, serial_number, count(*) from pulls group by 1, 2 having count(*) > 1`);
  await found(
    'minted differs from the pulls',
    sql`select c.id, c.minted, (select count(*) from pulls p where p.collectible_id = c.id)::int as pulled from collectibles c where c.minted <> (select count(*) from pulls p where p.collectible_id = c.id)`,
  );
  await found(
    'serial state differs from the pulls',
    sql`select s.pack_id, s.collectible_id, s.minted, (select count(*) from pulls p where p.pack_id = s.pack_id and p.collectible_id = s.collectible_id)::int as pulled from serial_states s where s.minted <> (select count(*) from pulls p where p.pack_id = s.pack_id and p.collectible_id = s.collectible_id)`,
  );
  await found(
    'an active entry has copies without serials (remaining + minted > allocated)',
    sql`select e.pack_id, e.collectible_id, e.remaining, s.minted, s.allocated from pack_pool_entries e join packs k on k.id = e.pack_id left join serial_states s on s.pack_id = e.pack_id and s.collectible_id = e.collectible_id where k.status = 'active' and e.remaining + coalesce(s.minted, 0) > coalesce(s.allocated, 0)`,
  );
  await found('pack sold past its supply', sql`select id, sold, supply from packs where supply is not null and sold > supply`);
  await found('sold differs from completed purchases', sql`select k.id, k.sold, (select count(*) from purchases p where p.pack_id = k.id and p.status = 'completed')::int as completed from packs k where k.sold <> (select count(*) from purchases p where p.pack_id = k.id and p.status = 'completed')`);
  await found('opened differs from opened packs', sql`select k.id, k.opened, (select count(*) from user_packs u where u.pack_id = k.id and u.opened_at is not null)::int as opened_packs from packs k where k.opened <> (select count(*) from user_packs u where u.pack_id = k.id and u.opened_at is not null)`);
  await found('owned pack without a completed purchase', sql`select u.id from user_packs u join purchases p on p.id = u.purchase_id where p.status <> 'completed'`);
  await found('opened pack with the wrong number of pulls', sql`select u.id, k.cards_per_pack, (select count(*) from pulls p where p.user_pack_id = u.id)::int as pulls from user_packs u join packs k on k.id = u.pack_id where u.opened_at is not null and (select count(*) from pulls p where p.user_pack_id = u.id) <> k.cards_per_pack`);
  return problems;
}
