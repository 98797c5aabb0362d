import { type SQL, sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { App } from '../../app.js';
import { findEconomyViolations } from '../../plugins/app/invariants/checker.js';
import { bearer } from './app.js';
import { ADMIN, type AdminPackView, expectStatus, getAdminPack } from './catalog.js';
import { signIn as signInUser } from './teams.js';

/** Fans, coins, purchases and opens through the API, and the economy's invariants read from the database. */

type Json = Record<string, unknown>;

export interface Fan {
  id: string;
  token: string;
}

export { expectStatus };

/** A fan who has called the API once (users exist from their first request). */
export async function signIn(app: App, id: string): Promise<Fan> {
  return { id, token: await signInUser(app, id) };
}

export function adjust(app: App, userId: string, body: Json, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `/api/admin/wallets/${encodeURIComponent(userId)}/adjustments`,
    headers: { ...bearer(ADMIN), ...headers },
    payload: body,
  });
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
  return app.inject({
    method: 'POST',
    url: `/api/packs/${encodeURIComponent(packId)}/purchase`,
    headers: { ...bearer(fan.token), ...headers },
  });
}

export function completePurchase(app: App, fan: Fan, packId: string, body: Json, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'PUT',
    url: `/api/packs/${encodeURIComponent(packId)}/purchase`,
    headers: { ...bearer(fan.token), ...headers },
    payload: body,
  });
}

export function cancelPurchase(app: App, fan: Fan, packId: string, purchaseId: string) {
  return app.inject({
    method: 'DELETE',
    url: `/api/packs/${encodeURIComponent(packId)}/purchase`,
    query: { purchaseId },
    headers: bearer(fan.token),
  });
}

export function openPack(app: App, fan: Fan, packId: string, body: Json = {}, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `/api/packs/${encodeURIComponent(packId)}/open`,
    headers: { ...bearer(fan.token), ...headers },
    payload: body,
  });
}

/** Starts and completes a purchase; answers the owned pack's id. */
export async function buyPack(
  app: App,
  fan: Fan,
  packId: string,
  clientSeed?: string,
): Promise<{ purchaseId: string; userPackId: string }> {
  const started = await startPurchase(app, fan, packId);
  expectStatus(started, 201, 'start purchase');
  const purchaseId = started.json().data.id as string;
  const completed = await completePurchase(app, fan, packId, { purchaseId, ...(clientSeed ? { clientSeed } : {}) });
  expectStatus(completed, 200, 'complete purchase');
  return { purchaseId, userPackId: completed.json().data.userPack.id };
}

/** The economy's invariants, as a list of violations (empty when all hold). */
export const economyViolations = (app: App): Promise<string[]> => findEconomyViolations(app.db.orm);

/** Asserts that every invariant of the economy holds. */
export async function assertNoViolations(t: Test, app: App): Promise<void> {
  t.same(await economyViolations(app), [], 'every invariant of the economy holds');
}

/** The error code of a response, if it has one (undefined for a success or a body that is no JSON). */
export const errorCode = (res: LightMyRequestResponse): string | undefined => {
  try {
    return res.json().error?.code;
  } catch {
    return undefined;
  }
};

/** The rows of a raw query on the app's database. */
export const sqlRows = async <T>(app: App, query: SQL): Promise<T[]> =>
  ((await app.db.orm.execute(query)) as unknown as { rows: T[] }).rows;

/** Purchases of a pack by stored status (the column, not the effective status). */
export async function purchaseStatuses(app: App, packId: string): Promise<Record<string, number>> {
  const found = await sqlRows<{ status: string; count: number }>(
    app,
    sql`select status, count(*)::int as count from purchases where pack_id = ${packId} group by status order by status`,
  );
  return Object.fromEntries(found.map((row) => [row.status, row.count]));
}

/** The admin view of a pack with its sales. */
export type SalesView = AdminPackView & { sold: number; opened: number; maxPerUser: number | null };
export const salesOf = async (app: App, packId: string) => (await getAdminPack(app, packId)) as SalesView;
