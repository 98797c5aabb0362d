import { randomUUID } from 'node:crypto';
import type { PackRow } from '../../../db/schema.js';
import type {
  AdminPack,
  AdminPackListQuery,
  AdminPackSummary,
  CreatePackBody,
  PackActionBody,
  PackRecord,
  PublicPack,
  PublicPackListQuery,
  UpdatePackBody,
} from '../../../schemas/packs.js';
import { MAX_POOL_ENTRIES } from '../../../schemas/packs.js';
import { recordAudit } from '../audit/repository.js';
import {
  authorize,
  authorizeList,
  forbidden,
  isAllowed,
  type Principal,
  requireAdminAccess,
  teamNotFound,
} from '../auth/policy.js';
import { findCollectible, teamExists } from '../collectibles/repository.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { decodeCursor } from '../pagination.js';
import { withCurrentRole } from '../teams/current-role.js';
import type { CatalogChange, CatalogEvents } from './catalog-cache.js';
import { allowedFrom, nextStatus } from './lifecycle.js';
import { reclaimAllExpired, reservedByPack, reservedOf, settleReservations } from '../purchases/repository.js';
import { availableFor, committedCopies } from '../purchases/rules.js';
import { canFillOnePack, drawOdds, totalRemaining } from './odds.js';
import { allocateSerials } from './serials-repository.js';
import {
  deletePoolEntry,
  findPack,
  insertPack,
  listActivePacks,
  listPacks,
  type PoolRow,
  poolOf,
  poolSizes,
  remainingByPack,
  updatePack,
  upsertPoolEntry,
} from './repository.js';

export const packNotFound = () => new NotFoundError('pack_not_found', 'No pack with this id.');

/** Packs that can be sold now: the pool's copies less those held by reservations and unopened packs. */
function availableOf(pack: PackRow, remaining: number, reserved: number): number {
  return availableFor({ ...pack, remaining, reserved });
}

export function toPublicPack(pack: PackRow, remaining: number, reserved: number): PublicPack {
  return {
    id: pack.id,
    teamId: pack.teamId,
    name: pack.name,
    description: pack.description,
    imageUrl: pack.imageUrl,
    price: pack.price,
    cardsPerPack: pack.cardsPerPack,
    available: availableOf(pack, remaining, reserved),
    publishedAt: (pack.publishedAt as Date).toISOString(),
  };
}

/** The pack as the audit log keeps it: its own fields, without the pool (audited entry by entry). */
export function toPackRecord(pack: PackRow): PackRecord {
  return {
    id: pack.id,
    teamId: pack.teamId,
    name: pack.name,
    description: pack.description,
    imageUrl: pack.imageUrl,
    status: pack.status,
    price: pack.price,
    cardsPerPack: pack.cardsPerPack,
    supply: pack.supply,
    maxPerUser: pack.maxPerUser,
    sold: pack.sold,
    opened: pack.opened,
    publishedAt: pack.publishedAt?.toISOString() ?? null,
    archivedAt: pack.archivedAt?.toISOString() ?? null,
    createdAt: pack.createdAt.toISOString(),
    updatedAt: pack.updatedAt.toISOString(),
  };
}

/** An admin list's item: the pack and the size of its pool, which GET /api/admin/packs/{id} shows in full. */
export function toAdminPackSummary(
  pack: PackRow,
  pool: { entries: number; remaining: number },
  reserved: number,
): AdminPackSummary {
  return { ...toPackRecord(pack), available: availableOf(pack, pool.remaining, reserved), poolSize: pool.entries };
}

export function toAdminPack(pack: PackRow, pool: PoolRow[], reserved: number): AdminPack {
  const odds = drawOdds(pool);
  return {
    ...toPackRecord(pack),
    available: availableOf(pack, totalRemaining(pool), reserved),
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

/** A pool entry as the audit log keeps it. */
const toEntryRecord = (entry: { collectibleId: string; weight: number; remaining: number } | undefined) =>
  entry ? { collectibleId: entry.collectibleId, weight: entry.weight, remaining: entry.remaining } : null;

const poolCommitted = (message: string, path: string) =>
  new ConflictError('pool_committed', `Packs already sold or reserved stay whole: ${message}.`, [{ path, message }]);

/** Throws pool_committed when a pool of `remaining` copies could not fill the packs sold unopened or reserved. */
function assertPoolCovers(pack: PackRow, reserved: number, remaining: number): void {
  const needed = committedCopies({ ...pack, reserved });
  if (remaining < needed)
    throw poolCommitted(
      `the pool would hold ${remaining} copies; the packs sold unopened or reserved need ${needed}`,
      '/quantity',
    );
}

const NO_PUBLIC_CHANGE: CatalogChange = { lists: false, packIds: [] };

/**
 * The public responses a change of one pack can affect: none unless the pack is active before or
 * after it (a draft or an archived pack is in no public response), else the lists and its detail.
 */
export function publicChangeOf(before: PackRow, after: PackRow): CatalogChange {
  return before.status === 'active' || after.status === 'active'
    ? { lists: true, packIds: [before.id] }
    : NO_PUBLIC_CHANGE;
}

/** What a change of a pack did, for its audit row; undefined when it changed nothing. */
type PackChange = { pack: PackRow; before: unknown; after: unknown } | undefined;

export function createPacksService(db: DatabaseHandle, events: CatalogEvents) {
  /**
   * Runs a change of one pack in a transaction holding its row lock, authorized with the caller's
   * role as it is now, audited (the pack's fields, or the pool entry that changed: never the
   * whole pool), then invalidates caches.
   */
  async function changePack(
    principal: Principal,
    packId: string,
    auditAction: string,
    change: (tx: Database, pack: PackRow, now: Date, pool: PoolRow[], reserved: number) => Promise<PackChange>,
  ): Promise<AdminPack> {
    requireAdminAccess(principal);
    // Expired reservations are reclaimed in short transactions first, so the change's own
    // transaction (which holds the pack's lock, stopping its sales) has little left to reclaim.
    await reclaimAllExpired(db.orm, packId);
    const result = await db.transaction(async (tx) => {
      const pack = await findPack(tx, packId, { lock: true });
      if (!pack) throw packNotFound();
      authorize(await withCurrentRole(tx, principal, pack.teamId), 'catalog:write', pack, packNotFound);
      const pool = await poolOf(tx, packId);
      const now = new Date();
      // Counted as the sales count them: expired reservations reclaimed, the live ones exactly.
      const reserved = await settleReservations(tx, packId, pack.reserved);
      const changed = await change(tx, pack, now, pool, reserved);
      // A change that changes nothing (a repeated addCollectible) leaves no trace.
      if (!changed) return { view: toAdminPack(pack, pool, reserved), affects: NO_PUBLIC_CHANGE };
      const after = toAdminPack(changed.pack, await poolOf(tx, packId), reserved);
      await recordAudit(
        tx,
        {
          actorId: principal.id,
          action: auditAction,
          targetType: 'pack',
          targetId: packId,
          teamId: pack.teamId,
          before: changed.before,
          after: changed.after,
        },
        now,
      );
      const affects = publicChangeOf(pack, changed.pack);
      await events.notify(tx, affects);
      return { view: after, affects };
    });
    events.invalidateLocal(result.affects);
    return result.view;
  }

  /** A change of the pack's own fields, audited as the pack before and after. */
  const fieldsChange = (pack: PackRow, changed: PackRow): PackChange => ({
    pack: changed,
    before: toPackRecord(pack),
    after: toPackRecord(changed),
  });

  return {
    async listPublic(query: PublicPackListQuery): Promise<{ packs: PublicPack[]; nextCursor: string | null }> {
      const page = await listActivePacks(
        db.orm,
        { teamId: query.teamId },
        {
          limit: query.limit ?? 100,
          after: decodeCursor(query.cursor),
        },
      );
      const ids = page.items.map((pack) => pack.id);
      const [remaining, reserved] = await Promise.all([remainingByPack(db.orm, ids), reservedByPack(db.orm, ids)]);
      return {
        packs: page.items.map((pack) => toPublicPack(pack, remaining.get(pack.id) ?? 0, reserved.get(pack.id) ?? 0)),
        nextCursor: page.nextCursor,
      };
    },

    async getPublic(packId: string) {
      const pack = await findPack(db.orm, packId);
      // Drafts and archived packs are not public: the same 404 as an unknown id.
      if (pack?.status !== 'active') throw packNotFound();
      const [pool, reserved] = await Promise.all([poolOf(db.orm, packId), reservedOf(db.orm, packId)]);
      const odds = drawOdds(pool);
      return {
        pack: toPublicPack(pack, totalRemaining(pool), reserved),
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
      const page = await listPacks(
        db.orm,
        { status: query.status, teamId: query.teamId },
        {
          limit: query.limit ?? 50,
          after: decodeCursor(query.cursor),
        },
      );
      const ids = page.items.map((pack) => pack.id);
      const [pools, reserved] = await Promise.all([poolSizes(db.orm, ids), reservedByPack(db.orm, ids)]);
      const items = page.items.map((pack) =>
        toAdminPackSummary(pack, pools.get(pack.id) ?? { entries: 0, remaining: 0 }, reserved.get(pack.id) ?? 0),
      );
      return { items, nextCursor: page.nextCursor };
    },

    async getAdmin(principal: Principal, packId: string): Promise<AdminPack> {
      requireAdminAccess(principal);
      const pack = await findPack(db.orm, packId);
      if (!pack) throw packNotFound();
      authorize(principal, 'catalog:read', pack, packNotFound);
      const [pool, reserved] = await Promise.all([poolOf(db.orm, packId), reservedOf(db.orm, packId)]);
      return toAdminPack(pack, pool, reserved);
    },

    async create(principal: Principal, body: CreatePackBody): Promise<AdminPack> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      // A platform (teamless) resource is the platform admins' alone: 403, there is no team to hide.
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      return db.transaction(async (tx) => {
        if (teamId !== null && !(await teamExists(tx, teamId))) throw teamNotFound();
        authorize(await withCurrentRole(tx, principal, teamId), 'catalog:write', { teamId }, teamNotFound);
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
          maxPerUser: body.maxPerUser ?? null,
          createdAt: now,
          updatedAt: now,
        });
        await recordAudit(
          tx,
          {
            actorId: principal.id,
            action: 'pack.create',
            targetType: 'pack',
            targetId: pack.id,
            teamId,
            before: null,
            after: toPackRecord(pack),
          },
          now,
        );
        return toAdminPack(pack, [], 0);
      });
    },

    update(principal: Principal, packId: string, body: UpdatePackBody): Promise<AdminPack> {
      return changePack(principal, packId, 'pack.update', async (tx, pack, now, _pool, reserved) => {
        const draftOnly = (['price', 'cardsPerPack', 'supply', 'maxPerUser'] as const).filter(
          (field) => body[field] !== undefined,
        );
        if (draftOnly.length > 0 && pack.status !== 'draft') {
          throw new ConflictError(
            'pack_not_draft',
            `The pack is ${pack.status}: price, cardsPerPack, supply and maxPerUser can change only while it is a draft.`,
            draftOnly.map((field) => ({ path: `/${field}`, message: `cannot change on a ${pack.status} pack` })),
          );
        }
        if (
          body.cardsPerPack !== undefined &&
          body.cardsPerPack !== pack.cardsPerPack &&
          committedCopies({ ...pack, reserved }) > 0
        ) {
          throw poolCommitted(
            'cardsPerPack cannot change while packs of it are sold unopened or reserved',
            '/cardsPerPack',
          );
        }
        if (body.supply !== undefined && body.supply !== null && body.supply < pack.sold + reserved) {
          throw new ConflictError(
            'supply_below_sales',
            `${pack.sold} packs are sold and ${reserved} reserved: supply cannot be lower.`,
            [{ path: '/supply', message: `must be at least ${pack.sold + reserved}` }],
          );
        }
        const changed = await updatePack(tx, pack.id, {
          ...(body.name !== undefined ? { name: body.name.trim() } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.imageUrl !== undefined ? { imageUrl: body.imageUrl } : {}),
          ...(body.price !== undefined ? { price: body.price } : {}),
          ...(body.cardsPerPack !== undefined ? { cardsPerPack: body.cardsPerPack } : {}),
          ...(body.supply !== undefined ? { supply: body.supply } : {}),
          ...(body.maxPerUser !== undefined ? { maxPerUser: body.maxPerUser } : {}),
          updatedAt: now,
        });
        return fieldsChange(pack, changed);
      });
    },

    /** [spec] POST /api/admin/packs/{id}: one action of the state machine, atomically. */
    applyAction(principal: Principal, packId: string, body: PackActionBody): Promise<AdminPack> {
      return changePack(principal, packId, `pack.${body.action}`, async (tx, pack, now, pool, reserved) => {
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
            // `pool` was read under the row lock: the pool as it stands.
            if (!canFillOnePack(pool, pack.cardsPerPack)) {
              throw new ConflictError(
                'pool_cannot_fill_pack',
                `The pool holds ${totalRemaining(pool)} copies; a pack needs ${pack.cardsPerPack}. Add collectibles before publishing.`,
              );
            }
            // Every copy gets its serial now, so no serial depends on when its pack is opened.
            await allocateSerials(tx, pack.id, pool, now);
            return fieldsChange(pack, await updatePack(tx, pack.id, { status: to, publishedAt: now, updatedAt: now }));
          }
          case 'archive':
            return fieldsChange(pack, await updatePack(tx, pack.id, { status: to, archivedAt: now, updatedAt: now }));
          case 'restore':
            return fieldsChange(
              pack,
              await updatePack(tx, pack.id, { status: to, archivedAt: null, publishedAt: null, updatedAt: now }),
            );
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
            const entry = pool.find((candidate) => candidate.collectibleId === collectibleId);
            const unchanged =
              entry !== undefined &&
              (body.quantity === undefined || body.quantity === entry.remaining) &&
              (body.weight === undefined || body.weight === entry.weight);
            if (unchanged) return undefined;
            if (!entry && pool.length >= MAX_POOL_ENTRIES) {
              throw new ConflictError(
                'pool_full',
                `The pool holds ${MAX_POOL_ENTRIES} collectibles, the most a pack may have; remove one before adding another.`,
                [{ path: '/collectibleId', message: `the pool already has ${MAX_POOL_ENTRIES} entries` }],
              );
            }
            const added = {
              collectibleId,
              weight: body.weight ?? entry?.weight ?? 1,
              remaining: body.quantity ?? entry?.remaining ?? 1,
            };
            assertPoolCovers(pack, reserved, totalRemaining(pool) - (entry?.remaining ?? 0) + added.remaining);
            await upsertPoolEntry(tx, {
              packId: pack.id,
              collectibleId,
              quantity: body.quantity,
              weight: body.weight,
              now,
            });
            return {
              pack: await updatePack(tx, pack.id, { updatedAt: now }),
              before: toEntryRecord(entry),
              after: toEntryRecord(added),
            };
          }
          case 'removeCollectible': {
            const entry = pool.find((candidate) => candidate.collectibleId === body.collectibleId);
            if (entry) assertPoolCovers(pack, reserved, totalRemaining(pool) - entry.remaining);
            if (!entry || !(await deletePoolEntry(tx, pack.id, entry.collectibleId))) {
              throw new NotFoundError('pool_entry_not_found', 'This collectible is not in the pack’s pool.');
            }
            return {
              pack: await updatePack(tx, pack.id, { updatedAt: now }),
              before: toEntryRecord(entry),
              after: null,
            };
          }
        }
      });
    },
  };
}

export type PacksService = ReturnType<typeof createPacksService>;
