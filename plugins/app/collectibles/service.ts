import { randomUUID } from 'node:crypto';
import type { CollectibleRow } from '../../../db/schema.js';
import type {
  Collectible,
  CollectibleListQuery,
  CreateCollectibleBody,
  UpdateCollectibleBody,
} from '../../../schemas/collectibles.js';
import type { AuditService } from '../audit/service.js';
import {
  authorize,
  authorizeList,
  forbidden,
  type Principal,
  requireAdminAccess,
  teamNotFound,
} from '../auth/policy.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import type { CatalogChange, CatalogEvents } from '../packs/catalog-cache.js';
import { pageOf } from '../pagination.js';
import type { TeamsService } from '../teams/service.js';
import { collectibleNotFound } from './errors.js';
import { findCollectible, insertCollectible, listCollectibles, updateCollectible } from './repository.js';

export function toCollectible(row: CollectibleRow): Collectible {
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    description: row.description,
    imageUrl: row.imageUrl,
    rarity: row.rarity,
    points: row.points,
    minted: row.minted,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The collectibles catalog: every change is authorized, transactional and audited. */
export function createCollectiblesService({
  db,
  events,
  audit,
  teams,
}: {
  db: DatabaseHandle;
  events: CatalogEvents;
  audit: AuditService;
  teams: TeamsService;
}) {
  return {
    /** The collectible, read in the caller's transaction (a pack's pool names it). */
    find(tx: Database, id: string): Promise<CollectibleRow | undefined> {
      return findCollectible(tx, id);
    },

    async create(principal: Principal, body: CreateCollectibleBody): Promise<Collectible> {
      const teamId = body.teamId ?? null;
      requireAdminAccess(principal);
      // A platform (teamless) resource is the platform admins' alone: 403, there is no team to hide.
      authorize(principal, 'catalog:write', { teamId }, teamId === null ? forbidden : teamNotFound);
      const row = await db.transaction(async (tx) => {
        if (teamId !== null && !(await teams.exists(tx, teamId))) throw teamNotFound();
        authorize(await teams.withCurrentRole(tx, principal, teamId), 'catalog:write', { teamId }, teamNotFound);
        const now = new Date();
        const created = await insertCollectible(tx, {
          id: randomUUID(),
          teamId,
          name: body.name,
          description: body.description ?? '',
          imageUrl: body.imageUrl ?? null,
          rarity: body.rarity ?? 'common',
          points: body.points ?? 0,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'collectible.create',
            targetType: 'collectible',
            targetId: created.id,
            teamId,
            before: null,
            after: toCollectible(created),
          },
          now,
        );
        return created;
      });
      return toCollectible(row);
    },

    async get(principal: Principal, id: string): Promise<Collectible> {
      requireAdminAccess(principal);
      const row = await findCollectible(db.orm, id);
      if (!row) throw collectibleNotFound();
      authorize(principal, 'catalog:read', row, collectibleNotFound);
      return toCollectible(row);
    },

    async update(principal: Principal, id: string, body: UpdateCollectibleBody): Promise<Collectible> {
      requireAdminAccess(principal);
      const row = await db.transaction(async (tx) => {
        const current = await findCollectible(tx, id, { lock: true });
        if (!current) throw collectibleNotFound();
        authorize(
          await teams.withCurrentRole(tx, principal, current.teamId),
          'catalog:write',
          current,
          collectibleNotFound,
        );
        const now = new Date();
        const updated = (await updateCollectible(tx, id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.imageUrl !== undefined ? { imageUrl: body.imageUrl } : {}),
          ...(body.rarity !== undefined ? { rarity: body.rarity } : {}),
          ...(body.points !== undefined ? { points: body.points } : {}),
          updatedAt: now,
        })) as CollectibleRow;
        await audit.record(
          tx,
          {
            actorId: principal.id,
            action: 'collectible.update',
            targetType: 'collectible',
            targetId: id,
            teamId: current.teamId,
            before: toCollectible(current),
            after: toCollectible(updated),
          },
          now,
        );
        // Names and rarities show in the public odds of the active packs that hold it.
        const affects: CatalogChange = { lists: false, packIds: await events.activePacksHolding(tx, id) };
        await events.notify(tx, affects);
        return { updated, affects };
      });
      events.invalidateLocal(row.affects);
      return toCollectible(row.updated);
    },

    async list(principal: Principal, query: CollectibleListQuery) {
      authorizeList(principal, 'catalog:read', query.teamId);
      const page = await listCollectibles(db.orm, { teamId: query.teamId, rarity: query.rarity }, pageOf(query));
      return { items: page.items.map(toCollectible), nextCursor: page.nextCursor };
    },
  };
}

export type CollectiblesService = ReturnType<typeof createCollectiblesService>;
