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
import { PUBLIC_PACK_PAGE_LIMITS } from '../../../schemas/packs.js';
import type { EventsService } from '../events/service.js';
import type { AuditService } from '../audit/service.js';
import {
  authorize,
  authorizeList,
  forbidden,
  type Principal,
  requireAdminAccess,
  teamNotFound,
} from '../auth/policy.js';
import type { CollectiblesService } from '../collectibles/service.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { pageOf } from '../pagination.js';
import type { PurchasesService } from '../purchases/service.js';
import type { TeamsService } from '../teams/service.js';
import type { CatalogEvents } from './catalog-cache.js';
import { applyPackAction, type PackChange, updateFields } from './changes.js';
import { packNotFound } from './errors.js';
import { drawOdds, totalRemaining } from './odds.js';
import {
  findPack,
  insertPack,
  listActivePacks,
  listPacks,
  type PoolRow,
  poolOf,
  poolSizes,
  remainingByPack,
} from './repository.js';
import { allocateSerials, loadMoves } from './serials-repository.js';
import {
  NO_PUBLIC_CHANGE,
  publicChangeOf,
  toAdminPack,
  toAdminPackSummary,
  toPackRecord,
  toPublicPack,
} from './views.js';

// The admin view, also shown by the demo catalog's audit rows.
export { toAdminPack };

export interface PacksServiceDeps {
  db: DatabaseHandle;
  catalogEvents: CatalogEvents;
  /** The domain event log: a publish is told to it. */
  events: Pick<EventsService, 'append'>;
  audit: AuditService;
  collectibles: Pick<CollectiblesService, 'find'>;
  teams: Pick<TeamsService, 'exists' | 'withCurrentRole'>;
  purchases: Pick<PurchasesService, 'reclaimAllExpired' | 'reservedByPack' | 'reservedOf' | 'settleReservations'>;
}

/** Packs and their pools: the public catalog, the admin views, and every change authorized, transactional and audited. */
export function createPacksService({
  db,
  catalogEvents,
  events,
  audit,
  collectibles,
  teams,
  purchases,
}: PacksServiceDeps) {
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
    await purchases.reclaimAllExpired(packId);
    const result = await db.transaction(async (tx) => {
      const pack = await findPack(tx, packId, { lock: true });
      if (!pack) throw packNotFound();
      authorize(await teams.withCurrentRole(tx, principal, pack.teamId), 'catalog:write', pack, packNotFound);
      const pool = await poolOf(tx, packId);
      const now = new Date();
      // Counted as the sales count them: expired reservations reclaimed, the live ones exactly.
      const reserved = await purchases.settleReservations(tx, packId, pack.reserved);
      const changed = await change(tx, pack, now, pool, reserved);
      // A change that changes nothing (a repeated addCollectible) leaves no trace.
      if (!changed) return { view: toAdminPack(pack, pool, reserved), affects: NO_PUBLIC_CHANGE };
      const after = toAdminPack(changed.pack, await poolOf(tx, packId), reserved);
      await audit.record(
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
      if (pack.status !== 'active' && changed.pack.status === 'active') {
        const published = changed.pack;
        await events.append(tx, {
          type: 'pack.published',
          teamId: published.teamId,
          subject: published.id,
          data: { packId: published.id, name: published.name, price: published.price, supply: published.supply },
        });
      }
      const affects = publicChangeOf(pack, changed.pack);
      await catalogEvents.notify(tx, affects);
      return { view: after, affects };
    });
    catalogEvents.invalidateLocal(result.affects);
    return result.view;
  }

  return {
    /**
     * Gives every copy of the pool that has none its serial, in the caller's transaction holding
     * the pack's row lock (a publish, an open drawing from a restored draft); answers every
     * entry's serials.
     */
    allocateSerials(
      tx: Database,
      packId: string,
      pool: readonly { collectibleId: string; remaining: number }[],
      now: Date,
    ) {
      return allocateSerials(tx, packId, pool, now);
    },

    /** The serials stored at the given places of each entry's list, in the caller's transaction (an open's draws). */
    serialMoves(tx: Database, packId: string, places: ReadonlyMap<string, ReadonlySet<number>>) {
      return loadMoves(tx, packId, places);
    },

    async listPublic(query: PublicPackListQuery): Promise<{ packs: PublicPack[]; nextCursor: string | null }> {
      const page = await listActivePacks(db.orm, { teamId: query.teamId }, pageOf(query, PUBLIC_PACK_PAGE_LIMITS));
      const ids = page.items.map((pack) => pack.id);
      const [remaining, reserved] = await Promise.all([remainingByPack(db.orm, ids), purchases.reservedByPack(ids)]);
      return {
        packs: page.items.map((pack) => toPublicPack(pack, remaining.get(pack.id) ?? 0, reserved.get(pack.id) ?? 0)),
        nextCursor: page.nextCursor,
      };
    },

    async getPublic(packId: string) {
      const pack = await findPack(db.orm, packId);
      // Drafts and archived packs are not public: the same 404 as an unknown id.
      if (pack?.status !== 'active') throw packNotFound();
      const [pool, reserved] = await Promise.all([poolOf(db.orm, packId), purchases.reservedOf(packId)]);
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
      const page = await listPacks(db.orm, { status: query.status, teamId: query.teamId }, pageOf(query));
      const ids = page.items.map((pack) => pack.id);
      const [pools, reserved] = await Promise.all([poolSizes(db.orm, ids), purchases.reservedByPack(ids)]);
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
      const [pool, reserved] = await Promise.all([poolOf(db.orm, packId), purchases.reservedOf(packId)]);
      return toAdminPack(pack, pool, reserved);
    },

    async create(principal: Principal, body: CreatePackBody): Promise<AdminPack> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      // A platform (teamless) resource is the platform admins' alone: 403, there is no team to hide.
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      return db.transaction(async (tx) => {
        if (teamId !== null && !(await teams.exists(tx, teamId))) throw teamNotFound();
        authorize(await teams.withCurrentRole(tx, principal, teamId), 'catalog:write', { teamId }, teamNotFound);
        const now = new Date();
        const pack = await insertPack(tx, {
          id: randomUUID(),
          teamId,
          name: body.name,
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
        await audit.record(
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
      return changePack(principal, packId, 'pack.update', (tx, pack, now, _pool, reserved) =>
        updateFields(tx, pack, now, reserved, body),
      );
    },

    /** [spec] POST /api/admin/packs/{id}: one action of the state machine, atomically. */
    applyAction(principal: Principal, packId: string, body: PackActionBody): Promise<AdminPack> {
      return changePack(principal, packId, `pack.${body.action}`, (tx, pack, now, pool, reserved) =>
        applyPackAction(tx, collectibles, principal, { pack, now, pool, reserved }, body),
      );
    },
  };
}

export type PacksService = ReturnType<typeof createPacksService>;
