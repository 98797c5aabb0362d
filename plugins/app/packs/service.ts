import { randomUUID } from 'node:crypto';
import type { PackRow } from '../../../db/schema.js';
import type {
  AdminPack,
  AdminPackListQuery,
  CreatePackBody,
  PackActionBody,
  PublicPack,
  PublicPackListQuery,
  UpdatePackBody,
} from '../../../schemas/packs.js';
import { recordAudit } from '../audit/repository.js';
import { authorize, authorizeList, forbidden, isAllowed, type Principal, requireAdminAccess, teamNotFound } from '../auth/policy.js';
import { findCollectible, teamExists } from '../collectibles/repository.js';
import type { Database, DatabaseHandle } from '../db.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { decodeCursor } from '../pagination.js';
import type { CatalogEvents } from './catalog-cache.js';
import { allowedFrom, nextStatus } from './lifecycle.js';
import { availablePacks, canFillOnePack, drawOdds, totalRemaining } from './odds.js';
import {
  deletePoolEntry,
  findPack,
  insertPack,
  listActivePacks,
  listPacks,
  type PoolRow,
  poolOf,
  poolsOf,
  remainingByPack,
  updatePack,
  upsertPoolEntry,
} from './repository.js';

const packNotFound = () => new NotFoundError('pack_not_found', 'No pack with this id.');

/**
 * Packs that can be sold now. Purchases (a later issue) will pass their sold, unopened and
 * reserved counts; until they exist every pack has none.
 */
function availableOf(pack: PackRow, remaining: number): number {
  return availablePacks({
    totalRemaining: remaining,
    cardsPerPack: pack.cardsPerPack,
    supply: pack.supply,
    sold: 0,
    soldUnopened: 0,
    reserved: 0,
  });
}

/** The fields the public and admin views share. */
function sharedFields(pack: PackRow, remaining: number) {
  return {
    id: pack.id,
    teamId: pack.teamId,
    name: pack.name,
    description: pack.description,
    imageUrl: pack.imageUrl,
    price: pack.price,
    cardsPerPack: pack.cardsPerPack,
    available: availableOf(pack, remaining),
  };
}

export function toPublicPack(pack: PackRow, remaining: number): PublicPack {
  return { ...sharedFields(pack, remaining), publishedAt: (pack.publishedAt as Date).toISOString() };
}

export function toAdminPack(pack: PackRow, pool: PoolRow[]): AdminPack {
  const odds = drawOdds(pool);
  return {
    ...sharedFields(pack, totalRemaining(pool)),
    status: pack.status,
    supply: pack.supply,
    publishedAt: pack.publishedAt?.toISOString() ?? null,
    archivedAt: pack.archivedAt?.toISOString() ?? null,
    createdAt: pack.createdAt.toISOString(),
    updatedAt: pack.updatedAt.toISOString(),
    pool: pool.map((entry, index) => ({
      collectibleId: entry.collectibleId,
      name: entry.collectible.name,
      rarity: entry.collectible.rarity,
      weight: entry.weight,
      remaining: entry.remaining,
      probability: odds[index]?.probability ?? 0,
    })),
  };
}

export function createPacksService(db: DatabaseHandle, events: CatalogEvents) {
  /** Runs a change of one pack in a transaction holding its row lock, audited, then invalidates caches. */
  async function changePack(
    principal: Principal,
    packId: string,
    auditAction: string,
    /** Returns the changed row, or `pack` itself when nothing changed. */
    change: (tx: Database, pack: PackRow, now: Date, before: AdminPack) => Promise<PackRow>,
  ): Promise<AdminPack> {
    requireAdminAccess(principal);
    const result = await db.transaction(async (tx) => {
      const pack = await findPack(tx, packId, { lock: true });
      if (!pack) throw packNotFound();
      authorize(principal, 'catalog:write', pack, packNotFound);
      const before = toAdminPack(pack, await poolOf(tx, packId));
      const now = new Date();
      const changed = await change(tx, pack, now, before);
      // A change that changes nothing (a repeated addCollectible) leaves no trace.
      if (changed === pack) return before;
      const after = toAdminPack(changed, await poolOf(tx, packId));
      await recordAudit(
        tx,
        { actorId: principal.id, action: auditAction, targetType: 'pack', targetId: packId, teamId: pack.teamId, before, after },
        now,
      );
      await events.notify(tx);
      return after;
    });
    events.invalidateLocal();
    return result;
  }

  return {
    async listPublic(query: PublicPackListQuery): Promise<{ packs: PublicPack[]; nextCursor: string | null }> {
      const page = await listActivePacks(db.orm, { teamId: query.teamId }, {
        limit: query.limit ?? 100,
        after: decodeCursor(query.cursor),
      });
      const remaining = await remainingByPack(db.orm, page.items.map((pack) => pack.id));
      return { packs: page.items.map((pack) => toPublicPack(pack, remaining.get(pack.id) ?? 0)), nextCursor: page.nextCursor };
    },

    async getPublic(packId: string) {
      const pack = await findPack(db.orm, packId);
      // Drafts and archived packs are not public: the same 404 as an unknown id.
      if (pack?.status !== 'active') throw packNotFound();
      const pool = await poolOf(db.orm, packId);
      const odds = drawOdds(pool);
      return {
        pack: toPublicPack(pack, totalRemaining(pool)),
        odds: pool.map((entry, index) => ({
          collectible: entry.collectible,
          weight: entry.weight,
          remaining: entry.remaining,
          probability: odds[index]?.probability ?? 0,
        })),
      };
    },

    async listAdmin(principal: Principal, query: AdminPackListQuery) {
      authorizeList(principal, 'catalog:read', query.teamId);
      const page = await listPacks(db.orm, { status: query.status, teamId: query.teamId }, {
        limit: query.limit ?? 50,
        after: decodeCursor(query.cursor),
      });
      const pools = await poolsOf(db.orm, page.items.map((pack) => pack.id));
      const items = page.items.map((pack) => toAdminPack(pack, pools.get(pack.id) ?? []));
      return { items, nextCursor: page.nextCursor };
    },

    async getAdmin(principal: Principal, packId: string): Promise<AdminPack> {
      requireAdminAccess(principal);
      const pack = await findPack(db.orm, packId);
      if (!pack) throw packNotFound();
      authorize(principal, 'catalog:read', pack, packNotFound);
      return toAdminPack(pack, await poolOf(db.orm, packId));
    },

    async create(principal: Principal, body: CreatePackBody): Promise<AdminPack> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      // A platform (teamless) resource is the platform admins' alone: 403, there is no team to hide.
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      return db.transaction(async (tx) => {
        if (teamId !== null && !(await teamExists(tx, teamId))) throw teamNotFound();
        const now = new Date();
        const pack = await insertPack(tx, {
          id: randomUUID(),
          teamId,
          name: body.name.trim(),
          description: body.description ?? '',
          imageUrl: body.imageUrl ?? null,
          status: 'draft',
          price: body.price ?? 0,
          cardsPerPack: body.cardsPerPack ?? 5,
          supply: body.supply ?? null,
          createdAt: now,
          updatedAt: now,
        });
        const created = toAdminPack(pack, []);
        await recordAudit(
          tx,
          { actorId: principal.id, action: 'pack.create', targetType: 'pack', targetId: pack.id, teamId, before: null, after: created },
          now,
        );
        return created;
      });
    },

    update(principal: Principal, packId: string, body: UpdatePackBody): Promise<AdminPack> {
      return changePack(principal, packId, 'pack.update', async (tx, pack, now) => {
        const draftOnly = (['price', 'cardsPerPack', 'supply'] as const).filter((field) => body[field] !== undefined);
        if (draftOnly.length > 0 && pack.status !== 'draft') {
          throw new ConflictError(
            'pack_not_draft',
            `The pack is ${pack.status}: price, cardsPerPack and supply can change only while it is a draft.`,
            draftOnly.map((field) => ({ path: `/${field}`, message: `cannot change on a ${pack.status} pack` })),
          );
        }
        return updatePack(tx, pack.id, {
          ...(body.name !== undefined ? { name: body.name.trim() } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.imageUrl !== undefined ? { imageUrl: body.imageUrl } : {}),
          ...(body.price !== undefined ? { price: body.price } : {}),
          ...(body.cardsPerPack !== undefined ? { cardsPerPack: body.cardsPerPack } : {}),
          ...(body.supply !== undefined ? { supply: body.supply } : {}),
          updatedAt: now,
        });
      });
    },

    /** [spec] POST /api/admin/packs/{id}: one action of the state machine, atomically. */
    applyAction(principal: Principal, packId: string, body: PackActionBody): Promise<AdminPack> {
      return changePack(principal, packId, `pack.${body.action}`, async (tx, pack, now, before) => {
        const to = nextStatus(pack.status, body.action);
        if (!to) {
          throw new ConflictError(
            'invalid_transition',
            `Cannot ${body.action}: the pack is ${pack.status}, and ${body.action} needs a pack that is ${allowedFrom(body.action).join(' or ')}.`,
            [{ path: '/action', message: `not allowed while the pack is ${pack.status}` }],
          );
        }
        switch (body.action) {
          case 'publish': {
            // `before` was read under the row lock: the pool as it stands.
            if (!canFillOnePack(before.pool, pack.cardsPerPack)) {
              throw new ConflictError(
                'pool_cannot_fill_pack',
                `The pool holds ${totalRemaining(before.pool)} copies; a pack needs ${pack.cardsPerPack}. Add collectibles before publishing.`,
              );
            }
            return updatePack(tx, pack.id, { status: to, publishedAt: now, updatedAt: now });
          }
          case 'archive':
            return updatePack(tx, pack.id, { status: to, archivedAt: now, updatedAt: now });
          case 'restore':
            return updatePack(tx, pack.id, { status: to, archivedAt: null, publishedAt: null, updatedAt: now });
          case 'addCollectible': {
            const collectibleId = body.collectibleId as string;
            const collectible = await findCollectible(tx, collectibleId);
            if (!collectible) throw new NotFoundError('collectible_not_found', 'No collectible with this id.');
            if (collectible.teamId !== null && collectible.teamId !== pack.teamId) {
              // Another team's collectible the caller cannot see answers as if it did not exist.
              if (!isAllowed(principal, 'catalog:read', collectible)) {
                throw new NotFoundError('collectible_not_found', 'No collectible with this id.');
              }
              throw new ConflictError(
                'collectible_wrong_team',
                'This collectible belongs to another team; a pack can use its own team’s collectibles and global ones.',
                [{ path: '/collectibleId', message: 'belongs to another team' }],
              );
            }
            const entry = before.pool.find((candidate) => candidate.collectibleId === collectibleId);
            const unchanged =
              entry !== undefined &&
              (body.quantity === undefined || body.quantity === entry.remaining) &&
              (body.weight === undefined || body.weight === entry.weight);
            if (unchanged) return pack;
            await upsertPoolEntry(tx, { packId: pack.id, collectibleId, quantity: body.quantity, weight: body.weight, now });
            return updatePack(tx, pack.id, { updatedAt: now });
          }
          case 'removeCollectible': {
            if (!(await deletePoolEntry(tx, pack.id, body.collectibleId as string))) {
              throw new NotFoundError('pool_entry_not_found', 'This collectible is not in the pack’s pool.');
            }
            return updatePack(tx, pack.id, { updatedAt: now });
          }
        }
      });
    },
  };
}

export type PacksService = ReturnType<typeof createPacksService>;
