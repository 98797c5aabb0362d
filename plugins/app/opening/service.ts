import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OpenPackBody, OpenResult } from '../../../schemas/purchases.js';
import type { Database } from '../database/index.js';
import { AppError } from '../errors.js';
import type { ChangeOutcome } from '../idempotency/index.js';
import { drawPack, drawPositions, type SerialState } from '../packs/draw.js';
import type { PoolEntry } from '../packs/odds.js';
import { activeBlocks, movesChanged, placesRead, serialsToAllocate } from '../packs/serials.js';
import { packNotFound } from '../packs/errors.js';
import type { PacksService } from '../packs/service.js';
import type { EventsService } from '../events/service.js';
import type { NewEvent } from '../../../schemas/events.js';
import {
  type DrawEntry,
  findOpenResult,
  lockOldestUnopened,
  lockOwnedPacks,
  lockPackForOpen,
  lockSharedRows,
  readDrawPool,
  writeOpens,
} from './repository.js';
import { noUnopenedPack, openNotFound, userPackNotFound } from './errors.js';

/** Whether some copy of the entry has no serial yet (copies added to a restored draft, or a pack published before serials). */
const lacksSerials = (entry: DrawEntry) =>
  entry.serials === null || serialsToAllocate(entry.serials, entry.remaining) > 0;

export interface OpenRequest {
  userId: string;
  body: OpenPackBody;
}

type OwnedPack = Awaited<ReturnType<typeof lockOwnedPacks>>[number];

const ownedKey = (userPackId: string, userId: string) => `${userId}\n${userPackId}`;

/**
 * Opening owned packs: the verifiable draw (packs/draw.ts) applied to the pool, serials, points
 * and the stored result, in the caller's transaction. An owned pack's row lock makes opening it
 * twice answer the first result; the pack's row lock, taken as late as possible, serializes the
 * opens of one pack with its sales and admin changes, and one hold of it draws a whole batch.
 */
/** The most opens of one pack one transaction draws. */
const MAX_OPEN_BATCH = 100;

/** The `pack.opened` event of an open, with the copies it gave. */
function openedEvent(result: OpenResult, userId: string, teamId: string | null): NewEvent {
  return {
    type: 'pack.opened',
    userId,
    teamId,
    subject: result.userPackId,
    data: {
      userPackId: result.userPackId,
      packId: result.packId,
      pulls: result.items.map((item) => ({
        pullId: item.id,
        collectibleId: item.collectible.id,
        rarity: item.collectible.rarity,
        points: item.collectible.points,
        serialNumber: item.serialNumber,
      })),
    },
  };
}

export function createOpeningService({
  packs,
  events,
  batchedChange,
}: {
  packs: Pick<PacksService, 'allocateSerials' | 'serialMoves'>;
  events: Pick<EventsService, 'append'>;
  batchedChange: FastifyInstance['batchedChange'];
}) {
  /**
   * The caller's owned pack to open, locked, with its purchase's seeds: the one named, or the
   * oldest unopened one not already `claimed` by an earlier open of the same batch.
   */
  async function pickUserPack(
    tx: Database,
    request: OpenRequest,
    packId: string,
    claimed: Set<string>,
    named: Map<string, OwnedPack>,
  ): Promise<OwnedPack> {
    const { userId, body } = request;
    if (body.userPackId !== undefined) {
      const owned = named.get(ownedKey(body.userPackId, userId));
      if (!owned || owned.packId !== packId) throw userPackNotFound();
      return owned;
    }
    const owned = await lockOldestUnopened(tx, userId, packId, [...claimed]);
    if (!owned) throw noUnopenedPack();
    return owned;
  }

  /**
   * Opens one or more owned packs of one pack in the caller's transaction, drawing them one
   * after another from the pool under one hold of the pack's row lock. Answers, in order, each
   * request's result or the AppError it is refused with; a pack named twice answers one draw twice.
   */
  async function openBatch(
    tx: Database,
    packId: string,
    requests: readonly OpenRequest[],
  ): Promise<(OpenResult | AppError)[]> {
    const outcomes: (OpenResult | AppError | number)[] = [];
    const fresh: { index: number; owned: OwnedPack; clientSeed: string; userId: string }[] = [];
    const claimed = new Map<string, number>();
    // Named packs first, in id order, so concurrent batches lock owned packs the same way round.
    const order = [...requests.keys()].sort((a, b) => {
      const [left, right] = [requests[a]?.body.userPackId ?? '\uffff', requests[b]?.body.userPackId ?? '\uffff'];
      return left < right ? -1 : left > right ? 1 : a - b;
    });
    // The named packs locked in one query, in id order.
    const namedKeys = requests.flatMap((request) =>
      request.body.userPackId === undefined ? [] : [{ id: request.body.userPackId, userId: request.userId }],
    );
    const named = new Map(
      (await lockOwnedPacks(tx, namedKeys)).map((owned) => [ownedKey(owned.id, owned.userId), owned]),
    );
    for (const index of order) {
      const request = requests[index] as OpenRequest;
      try {
        const owned = await pickUserPack(tx, request, packId, new Set(claimed.keys()), named);
        const earlier = claimed.get(owned.id);
        if (earlier !== undefined) outcomes[index] = earlier;
        else if (owned.openedAt !== null) {
          const stored = await findOpenResult(tx, { userPackId: owned.id, userId: request.userId });
          if (!stored) throw new Error(`opened pack ${owned.id} has no stored result`);
          outcomes[index] = stored;
        } else {
          claimed.set(owned.id, index);
          const clientSeed = request.body.clientSeed ?? owned.clientSeed ?? randomBytes(16).toString('hex');
          fresh.push({ index, owned, clientSeed, userId: request.userId });
        }
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        outcomes[index] = error;
      }
    }
    if (fresh.length > 0) {
      fresh.sort((a, b) => a.index - b.index);
      for (const [index, result] of (await drawAndWrite(tx, packId, fresh)).entries())
        outcomes[(fresh[index] as { index: number }).index] = result;
    }
    // A pack named twice in one batch answers the one draw.
    return outcomes.map((outcome) => (typeof outcome === 'number' ? (outcomes[outcome] as OpenResult) : outcome));
  }

  /** The draws of fresh opens, one after another from the pool as each leaves it, and one write of them all. */
  async function drawAndWrite(
    tx: Database,
    packId: string,
    opens: { owned: OwnedPack; clientSeed: string; userId: string }[],
  ): Promise<OpenResult[]> {
    const now = new Date();
    const locked = await lockPackForOpen(tx, packId, opens.length);
    if (!locked) throw packNotFound();
    const { cardsPerPack } = locked;
    let pool = await readDrawPool(tx, packId);
    let byId = new Map(pool.map((entry) => [entry.collectibleId, entry]));
    const entryOf = (id: string) => byId.get(id) as DrawEntry;

    // Which entries the draws take and where, open after open: only those serial places are read.
    const positions: { collectibleId: string; position: number }[] = [];
    let working: PoolEntry[] = pool;
    for (const open of opens) {
      const drawn = drawPositions(open.owned.serverSeed, open.clientSeed, cardsPerPack, working);
      positions.push(...drawn.positions);
      working = drawn.poolAfter;
    }
    const drawnIds = [...new Set(positions.map((drawn) => drawn.collectibleId))];
    if (drawnIds.some((id) => lacksSerials(entryOf(id)))) {
      await packs.allocateSerials(tx, packId, drawnIds.map(entryOf), now);
      pool = await readDrawPool(tx, packId);
      byId = new Map(pool.map((entry) => [entry.collectibleId, entry]));
    }
    const stateOf = (id: string) => {
      const serials = entryOf(id).serials;
      if (!serials) throw new Error(`no serial state for ${id} in pack ${packId}`);
      return serials;
    };
    const moves = await packs.serialMoves(
      tx,
      packId,
      placesRead(positions, new Map(drawnIds.map((id) => [id, stateOf(id).minted]))),
    );
    const before = new Map<string, SerialState>(
      drawnIds.map((id) => {
        const stored = stateOf(id);
        const length = stored.minted + entryOf(id).remaining;
        return [
          id,
          { blocks: activeBlocks(stored.blocks, length), minted: stored.minted, moved: moves.get(id) ?? new Map() },
        ];
      }),
    );

    let serials = new Map(before);
    let current: readonly PoolEntry[] = pool;
    const results: OpenResult[] = [];
    const taken = new Map<string, number>();
    const scores = new Map<string, number>();
    for (const open of opens) {
      const drawn = drawPack({
        serverSeed: open.owned.serverSeed,
        clientSeed: open.clientSeed,
        cardsPerPack,
        pool: current,
        serials,
      });
      current = drawn.poolAfter;
      serials = new Map([...serials, ...drawn.serialsAfter]);
      for (const draw of drawn.draws) {
        taken.set(draw.collectibleId, (taken.get(draw.collectibleId) ?? 0) + 1);
        scores.set(open.userId, (scores.get(open.userId) ?? 0) + entryOf(draw.collectibleId).collectible.points);
      }
      results.push({
        userPackId: open.owned.id,
        packId,
        openedAt: now.toISOString(),
        items: drawn.draws.map((draw) => ({
          id: randomUUID(),
          collectible: entryOf(draw.collectibleId).collectible,
          serialNumber: draw.serialNumber,
          editionSize: entryOf(draw.collectibleId).editionSize,
        })),
        fairness: {
          serverSeed: open.owned.serverSeed,
          serverSeedHash: open.owned.serverSeedHash,
          clientSeed: open.clientSeed,
          pool: drawn.pool,
          draws: drawn.draws,
        },
      });
    }
    await lockSharedRows(tx, { collectibleIds: [...taken.keys()], userIds: [...scores.keys()] });
    const changes = drawnIds.map((id) => ({
      id,
      ...movesChanged((before.get(id) as SerialState).moved, (serials.get(id) as SerialState).moved),
    }));
    await writeOpens(tx, {
      packId,
      openedAt: now,
      takes: [...taken].map(([collectibleId, count]) => ({ collectibleId, count })),
      movesSet: changes.flatMap((change) =>
        change.set.map(([place, serialNumber]) => ({ collectibleId: change.id, place, serialNumber })),
      ),
      movesRemoved: changes.flatMap((change) => change.removed.map((place) => ({ collectibleId: change.id, place }))),
      scores: [...scores].map(([userId, points]) => ({ userId, points })),
      opens: opens.map((open, index) => ({ userId: open.userId, result: results[index] as OpenResult })),
    });
    await events.append(
      tx,
      ...results.map((result, index) =>
        openedEvent(result, (opens[index] as { userId: string }).userId, locked.teamId),
      ),
    );
    return results;
  }

  // A crowd opening one pack is served a batch at a time: one transaction, one hold of the pack's row lock.
  const opens = batchedChange({ maxBatch: MAX_OPEN_BATCH, work: openBatch });

  return {
    /**
     * Opens an owned pack of `packId` (the one named, or the oldest unopened) and answers the
     * outcome to send (200 with the result, idempotent). Opens of one pack arriving while its
     * batch runs are drawn by the next batch, in one transaction under one hold of the pack's row
     * lock, each answered with its own result or its own error: the caller need not know.
     */
    open(request: FastifyRequest, packId: string, input: OpenRequest): Promise<ChangeOutcome> {
      return opens.run(request, 200, packId, input);
    },

    /** A stored open result, for its owner only. */
    async openResult(db: Database, userId: string, userPackId: string): Promise<OpenResult> {
      const stored = await findOpenResult(db, { userPackId, userId });
      if (!stored) throw openNotFound();
      return stored;
    },
  };
}

export type OpeningService = ReturnType<typeof createOpeningService>;
