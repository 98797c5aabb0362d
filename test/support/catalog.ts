import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { App } from '../../app.js';
import { teams } from '../../db/schema.js';
import { bearer, tokenFor } from './app.js';

/**
 * Catalog fixtures made through the admin API (collectibles, packs, pools, actions), so tests
 * exercise the same paths as a real admin; teams are inserted directly (their endpoints do not
 * exist yet).
 */

/** A platform admin (by token claim) and a signed-in fan with no role. */
export const ADMIN = tokenFor('root', { role: 'admin' });
export const FAN = tokenFor('fan-1');

type Json = Record<string, unknown>;

export interface CollectibleView {
  id: string;
  teamId: string | null;
  name: string;
  description: string;
  imageUrl: string | null;
  rarity: string;
  points: number;
  minted: number;
  createdAt: string;
  updatedAt: string;
}

export interface PoolEntryView {
  collectibleId: string;
  name: string;
  rarity: string;
  weight: number;
  remaining: number;
  probability: number;
}

export interface AdminPackView {
  id: string;
  teamId: string | null;
  name: string;
  description: string;
  imageUrl: string | null;
  status: 'draft' | 'active' | 'archived';
  price: number;
  cardsPerPack: number;
  supply: number | null;
  available: number;
  publishedAt: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
  pool: PoolEntryView[];
}

export interface AuditEntry {
  id: string;
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  teamId: string | null;
  before: unknown;
  after: unknown;
  createdAt: string;
}

/** The keys of the public pack view ([spec] GET /api/packs), sorted. */
export const PUBLIC_PACK_KEYS = [
  'available',
  'cardsPerPack',
  'description',
  'id',
  'imageUrl',
  'name',
  'price',
  'publishedAt',
  'teamId',
];
/** The keys of the admin pack view, sorted. */
export const ADMIN_PACK_KEYS = [
  'archivedAt',
  'available',
  'cardsPerPack',
  'createdAt',
  'description',
  'id',
  'imageUrl',
  'maxPerUser',
  'name',
  'opened',
  'pool',
  'price',
  'publishedAt',
  'sold',
  'status',
  'supply',
  'teamId',
  'updatedAt',
];

export const sortedKeys = (value: unknown): string[] => Object.keys(value as object).sort();

/** Fails loudly with the response body when a fixture request does not succeed. */
export function expectStatus(res: LightMyRequestResponse, status: number, what: string): void {
  if (res.statusCode !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.statusCode}: ${res.body}`);
  }
}

/**
 * Asserts a 400 `validation_failed` whose details name `paths`: these and no other with
 * `exactly`, else at least these.
 */
export function assertValidation(
  t: Test,
  res: LightMyRequestResponse,
  paths: string[],
  label: string,
  options: { exactly?: boolean } = {},
): void {
  t.equal(res.statusCode, 400, label);
  const body = res.json();
  t.equal(body.success, false, label);
  t.equal(body.error?.code, 'validation_failed', label);
  const named = [...new Set((body.error?.details ?? []).map((detail: { path: string }) => detail.path))].sort();
  if (options.exactly) t.same(named, [...paths].sort(), `${label}: names ${paths.join(', ')}`);
  else
    t.ok(
      paths.every((path) => named.includes(path)),
      `${label}: names ${paths.join(', ')} (${JSON.stringify(named)})`,
    );
}

export async function insertTeam(app: App, name = 'Team'): Promise<string> {
  const id = randomUUID();
  await app.db.orm.insert(teams).values({ id, name: `${name} ${id.slice(0, 8)}`, slug: `team-${id}` });
  return id;
}

export async function createCollectible(app: App, body: Json = {}): Promise<CollectibleView> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/admin/collectibles',
    headers: bearer(ADMIN),
    payload: { name: 'Card', ...body },
  });
  expectStatus(res, 201, 'create collectible');
  return res.json().data;
}

export async function createPack(app: App, body: Json = {}): Promise<AdminPackView> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/admin/packs',
    headers: bearer(ADMIN),
    payload: { name: 'Pack', ...body },
  });
  expectStatus(res, 201, 'create pack');
  return res.json().data;
}

/** POST /api/admin/packs/{id} as `token` (the admin by default); the raw response. */
export function packAction(
  app: App,
  packId: string,
  body: Json,
  token: string | null = ADMIN,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: `/api/admin/packs/${encodeURIComponent(packId)}`,
    headers: token === null ? {} : bearer(token),
    payload: body,
  });
}

/** An action that must succeed; the pack after it. */
export async function applyAction(app: App, packId: string, body: Json): Promise<AdminPackView> {
  const res = await packAction(app, packId, body);
  expectStatus(res, 200, `pack action ${JSON.stringify(body)}`);
  return res.json().data.pack;
}

export async function getAdminPack(app: App, packId: string): Promise<AdminPackView> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/admin/packs/${encodeURIComponent(packId)}`,
    headers: bearer(ADMIN),
  });
  expectStatus(res, 200, 'get admin pack');
  return res.json().data;
}

export interface PoolSpec {
  quantity?: number;
  weight?: number;
  collectible?: Json;
}

/**
 * A pack in the given status: created (with `pack` fields), its pool filled with one new
 * collectible per `pool` item, then published (active) or published and archived (archived).
 */
export async function packInStatus(
  app: App,
  status: 'draft' | 'active' | 'archived',
  options: { pack?: Json; pool?: PoolSpec[] } = {},
): Promise<{ pack: AdminPackView; collectibles: CollectibleView[] }> {
  const created = await createPack(app, options.pack);
  const pool = options.pool ?? [{ quantity: 10 }];
  const collectibles: CollectibleView[] = [];
  for (const entry of pool) {
    const collectible = await createCollectible(app, { teamId: created.teamId, ...entry.collectible });
    collectibles.push(collectible);
    await applyAction(app, created.id, {
      action: 'addCollectible',
      collectibleId: collectible.id,
      ...(entry.quantity !== undefined ? { quantity: entry.quantity } : {}),
      ...(entry.weight !== undefined ? { weight: entry.weight } : {}),
    });
  }
  if (status !== 'draft') await applyAction(app, created.id, { action: 'publish' });
  if (status === 'archived') await applyAction(app, created.id, { action: 'archive' });
  return { pack: await getAdminPack(app, created.id), collectibles };
}

export async function auditLog(app: App, query: Record<string, string | number> = {}): Promise<AuditEntry[]> {
  const res = await app.inject({
    method: 'GET',
    url: '/api/admin/audit-log',
    headers: bearer(ADMIN),
    query: stringify(query),
  });
  expectStatus(res, 200, 'audit log');
  return res.json().data;
}

/** Every audit entry (all pages), newest first. */
export async function allAuditEntries(app: App, query: Record<string, string> = {}): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const res: LightMyRequestResponse = await app.inject({
      method: 'GET',
      url: '/api/admin/audit-log',
      headers: bearer(ADMIN),
      query: { ...query, limit: '200', ...(cursor ? { cursor } : {}) },
    });
    expectStatus(res, 200, 'audit log page');
    const body = res.json();
    entries.push(...body.data);
    cursor = body.nextCursor;
  } while (cursor);
  return entries;
}

export function stringify(query: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).map(([key, value]) => [key, String(value)]));
}

/** Base64url of a JSON value: a cursor that decodes but was never issued. */
export const fakeCursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
