import type { LeaderboardRow } from '../../../db/schema.js';
import type { DomainEvent } from '../../../schemas/events.js';
import type { BoardInfo, LeaderboardEntry, LeaderboardWindow } from '../../../schemas/leaderboards.js';
import type { Database, DatabaseHandle } from '../database/index.js';
import { remembered } from '../remembered.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { toPoints } from './ranks.js';
import {
  applyScoreDeltas,
  type BoardIdentity,
  boardsByKey,
  freezeBoard,
  frozenAround,
  frozenPage,
  type LiveCursor,
  liveAround,
  livePage,
  openBoards,
  positionOf,
  type RankedRow,
  type ScoreDelta,
} from './repository.js';
import {
  COLLECTORS_TIME_ZONE,
  collectorBoardsAt,
  collectorsBoardOf,
  leagueBoard,
  leagueBoardOf,
  type WindowChoice,
  weekByKey,
  weekOf,
} from './windows.js';

/** What the leaderboards read of leagues, through the leagues service. */
export interface LeagueReader {
  /** A league (undefined when unknown). */
  leagueOf(db: Database, leagueId: string): Promise<{ leagueId: string; timeZone: string; season: string } | undefined>;
  /** A round with what its totals need: its league, the league's zone, its season, when it locks. */
  roundOf(
    db: Database,
    roundId: string,
  ): Promise<{ roundId: string; leagueId: string; timeZone: string; season: string; locksAt: Date } | undefined>;
  /** A final round's standings after a position, in position order (scores in hundredths). */
  standingsPage(
    db: Database,
    roundId: string,
    afterPosition: number,
    limit: number,
  ): Promise<{ userId: string; score: number; position: number }[]>;
  /** How many of a league's rounds are not final: of a season, or locking within [from, to). */
  unfinishedRounds(
    db: Database,
    leagueId: string,
    filter: { season: string } | { locksFrom: Date; locksBefore: Date },
  ): Promise<number>;
}

/** A collector week closes this long after its end, so that events committed late still count in it. */
const COLLECTOR_WEEK_GRACE_MS = 5 * 60_000;
/** Standings a consumer batch reads per statement when a round is final. */
const STANDINGS_PAGE = 5_000;
const CACHE_ENTRIES = 1_000;
/** Score changes written per set of statements. */
const FLUSH_DELTAS = 15_000;

export interface BoardPage {
  board: BoardInfo;
  entries: LeaderboardEntry[];
  nextCursor: string | null;
}

export interface BoardAround {
  board: BoardInfo;
  me: LeaderboardEntry | null;
  above: LeaderboardEntry[];
  below: LeaderboardEntry[];
}

const invalidCursor = () =>
  new ValidationError(
    'The cursor is not valid; use the nextCursor of a previous page of this board.',
    [{ path: '/querystring/cursor', message: 'is not a cursor this board issued' }],
    'invalid_cursor',
  );

type Cursor = { live: LiveCursor } | { position: number };

const encodeCursor = (cursor: Cursor): string =>
  Buffer.from(
    JSON.stringify(
      'live' in cursor ? ['l', cursor.live.score, cursor.live.reachedAt, cursor.live.userId] : ['f', cursor.position],
    ),
  ).toString('base64url');

function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed)) throw invalidCursor();
  const [kind, a, b, c] = parsed as unknown[];
  if (kind === 'f' && parsed.length === 2 && Number.isSafeInteger(a) && (a as number) >= 0)
    return { position: a as number };
  if (
    kind === 'l' &&
    parsed.length === 4 &&
    Number.isSafeInteger(a) &&
    typeof b === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(b) &&
    !Number.isNaN(Date.parse(b)) &&
    typeof c === 'string' &&
    c.length >= 1 &&
    c.length <= 128 &&
    !c.includes('\u0000')
  )
    return { live: { score: a as number, reachedAt: b, userId: c } };
  throw invalidCursor();
}

const toEntry = (row: RankedRow): LeaderboardEntry => ({
  rank: row.rank,
  position: row.position,
  userId: row.userId,
  displayName: row.displayName,
  score: toPoints(row.score),
});

/**
 * Leaderboards with windows: the collector board (points from pulls) and each league's totals.
 * A consumer of the event log keeps the live boards; a job freezes the windows that closed,
 * which are then read from their frozen rows, hash and all. The first page of a live board is
 * cached for `cacheMs`: a crowd watching the top of a board costs one read per interval.
 */
export function createLeaderboardsService({
  db,
  leagues,
  cacheMs,
}: {
  db: DatabaseHandle;
  leagues: LeagueReader;
  cacheMs: number;
}) {
  /** Top pages by board and limit: the last one read, and the read under way. */
  const cache = new Map<string, { expires: number; page?: BoardPage; pending?: Promise<BoardPage> }>();

  const infoOf = (identity: BoardIdentity, stored: LeaderboardRow | undefined, now: Date): BoardInfo => ({
    kind: identity.kind as BoardInfo['kind'],
    id: identity.subjectId,
    window: identity.window as LeaderboardWindow,
    windowKey: identity.windowKey,
    timeZone: identity.timeZone,
    final: Boolean(stored?.frozenAt),
    hash: stored?.hash ?? null,
    entrants: stored?.entrants ?? 0,
    asOf: (stored?.frozenAt ?? now).toISOString(),
  });

  /**
   * A board's first page from memory: fresh for `cacheMs`; past that, the page read last is still
   * answered while one read (never one per request: a crowd would queue on the pool) replaces it.
   */
  function cachedTopPage(identity: BoardIdentity, limit: number): Promise<BoardPage> {
    const key = `${identity.key}\u0000${limit}`;
    let entry = cache.get(key);
    if (entry?.page && entry.expires > Date.now()) return Promise.resolve(entry.page);
    if (!entry?.pending) {
      if (!entry && cache.size >= CACHE_ENTRIES) cache.clear();
      const pending = read(identity, undefined, limit).finally(() => {
        const current = cache.get(key);
        if (current?.pending === pending) current.pending = undefined;
      });
      pending.then(
        (page) => cache.set(key, { expires: Date.now() + cacheMs, page }),
        () => {},
      );
      entry = { expires: entry?.expires ?? 0, page: entry?.page, pending };
      cache.set(key, entry);
    }
    return entry.page ? Promise.resolve(entry.page) : (entry.pending as Promise<BoardPage>);
  }

  async function page(identity: BoardIdentity, query: { limit?: number; cursor?: string }): Promise<BoardPage> {
    const limit = query.limit ?? 100;
    const cursor = decodeCursor(query.cursor);
    if (cursor === undefined && cacheMs > 0) return cachedTopPage(identity, limit);
    return read(identity, cursor, limit);
  }

  async function read(identity: BoardIdentity, cursor: Cursor | undefined, limit: number): Promise<BoardPage> {
    const now = new Date();
    const [stored] = await boardsByKey(db.orm, [identity.key]);
    const board = infoOf(identity, stored, now);
    let result: BoardPage;
    if (stored?.frozenAt) {
      let after = 0;
      if (cursor && 'position' in cursor) after = cursor.position;
      // A page of the live board read before it froze goes on from the same fan.
      else if (cursor) after = (await positionOf(db.orm, identity.key, cursor.live.userId)) ?? 0;
      const rows = await frozenPage(db.orm, identity.key, after, limit + 1);
      const shown = rows.slice(0, limit);
      const last = shown[shown.length - 1];
      result = {
        board,
        entries: shown.map(toEntry),
        nextCursor: rows.length > limit && last?.position ? encodeCursor({ position: last.position }) : null,
      };
    } else {
      if (cursor && 'position' in cursor) throw invalidCursor();
      const rows = await livePage(db.orm, identity.key, cursor?.live, limit + 1);
      const shown = rows.slice(0, limit);
      const last = shown[shown.length - 1];
      result = {
        board,
        entries: shown.map(toEntry),
        nextCursor:
          rows.length > limit && last
            ? encodeCursor({ live: { score: last.score, reachedAt: last.reachedAt, userId: last.userId } })
            : null,
      };
    }
    return result;
  }

  /** What a board is (frozen or not, its entrants), remembered for `cacheMs`: every fan's rank reads it. */
  const boardRow = remembered(cacheMs, CACHE_ENTRIES, async (key): Promise<LeaderboardRow | undefined> => {
    const [row] = await boardsByKey(db.orm, [key]);
    return row;
  });

  async function around(identity: BoardIdentity, userId: string, count: number): Promise<BoardAround> {
    const stored = await boardRow(identity.key);
    const board = infoOf(identity, stored, new Date());
    const found = stored?.frozenAt
      ? await frozenAround(db.orm, identity.key, userId, count)
      : await liveAround(db.orm, identity.key, userId, count);
    if (!found) return { board, me: null, above: [], below: [] };
    return { board, me: toEntry(found.me), above: found.above.map(toEntry), below: found.below.map(toEntry) };
  }

  async function leagueIdentity(leagueId: string, query: WindowChoice): Promise<BoardIdentity> {
    const league = await leagues.leagueOf(db.orm, leagueId);
    if (!league) throw leagueNotFound();
    return leagueBoardOf({ id: league.leagueId, timeZone: league.timeZone, season: league.season }, query, new Date());
  }

  /** What one event adds to which boards, in chunks (a round of a million fans is read page by page). */
  async function* deltasOf(
    tx: Database,
    event: DomainEvent,
  ): AsyncGenerator<{ boards: BoardIdentity[]; deltas: ScoreDelta[] }> {
    if (event.type === 'pack.opened' || event.type === 'reward.granted') {
      if (!event.userId) return;
      if (event.type === 'reward.granted' && event.data.collectibles.length === 0) return;
      const points =
        event.type === 'pack.opened'
          ? event.data.pulls.reduce((sum, pull) => sum + pull.points, 0)
          : (event.data.points ?? 0);
      const boards = collectorBoardsAt(event.occurredAt);
      const userId = event.userId;
      yield {
        boards,
        deltas: boards.map((board) => ({ board: board.key, userId, points: points * 100, at: event.occurredAt })),
      };
    } else if (event.type === 'round.finalized') {
      const round = await leagues.roundOf(tx, event.data.roundId);
      if (!round) return;
      const league = { id: round.leagueId, timeZone: round.timeZone };
      const boards = [
        leagueBoard(league, 'all-time', 'all-time'),
        leagueBoard(league, 'season', round.season),
        leagueBoard(league, 'week', weekOf(round.locksAt, league.timeZone).key),
      ];
      for (let after = 0; ; ) {
        const standings = await leagues.standingsPage(tx, round.roundId, after, STANDINGS_PAGE);
        yield {
          boards,
          deltas: standings.flatMap((standing) =>
            boards.map((board) => ({
              board: board.key,
              userId: standing.userId,
              points: standing.score,
              at: event.occurredAt,
            })),
          ),
        };
        const last = standings[standings.length - 1];
        if (!last || standings.length < STANDINGS_PAGE) break;
        after = last.position;
      }
    }
  }

  return {
    collectors: {
      page: (query: WindowChoice & { limit?: number; cursor?: string }) =>
        page(collectorsBoardOf(query, new Date()), query),
      around: (userId: string, query: WindowChoice & { around?: number }) =>
        around(collectorsBoardOf(query, new Date()), userId, query.around ?? 5),
    },
    league: {
      page: async (leagueId: string, query: WindowChoice & { limit?: number; cursor?: string }) =>
        page(await leagueIdentity(leagueId, query), query),
      around: async (leagueId: string, userId: string, query: WindowChoice & { around?: number }) =>
        around(await leagueIdentity(leagueId, query), userId, query.around ?? 5),
    },

    /** The consumer's work on a batch of events, in its transaction. */
    async applyEvents(tx: Database, events: readonly DomainEvent[]): Promise<void> {
      const boards = new Map<string, BoardIdentity>();
      const deltas: ScoreDelta[] = [];
      const flush = async () => {
        if (deltas.length > 0) await applyScoreDeltas(tx, [...boards.values()], deltas.splice(0));
        boards.clear();
      };
      for (const event of events)
        for await (const chunk of deltasOf(tx, event)) {
          for (const board of chunk.boards) boards.set(board.key, board);
          deltas.push(...chunk.deltas);
          // Bounded statements: a round of a million fans is written in slices.
          if (deltas.length >= FLUSH_DELTAS) await flush();
        }
      await flush();
    },

    /**
     * Freezes every window that has closed and answers how many: collector weeks once their grace
     * has passed (the consumer drained first), league weeks and seasons once their rounds are all
     * final and the league moved on from the season. Each in its own transaction.
     */
    async freezeClosed(now: Date = new Date()): Promise<number> {
      let frozen = 0;
      const freeze = async (key: string) => {
        await db.transaction((tx) => freezeBoard(tx, key));
        frozen++;
      };
      for (const board of await openBoards(db.orm, 'collectors', 'week')) {
        const week = weekByKey(board.windowKey, COLLECTORS_TIME_ZONE);
        if (week?.endsAt && week.endsAt.getTime() + COLLECTOR_WEEK_GRACE_MS <= now.getTime()) await freeze(board.key);
      }
      for (const board of await openBoards(db.orm, 'league', 'week')) {
        const week = weekByKey(board.windowKey, board.timeZone);
        if (!week?.endsAt || !board.subjectId || week.endsAt > now) continue;
        const open = await leagues.unfinishedRounds(db.orm, board.subjectId, {
          locksFrom: week.startsAt,
          locksBefore: week.endsAt,
        });
        if (open === 0) await freeze(board.key);
      }
      for (const board of await openBoards(db.orm, 'league', 'season')) {
        if (!board.subjectId) continue;
        const league = await leagues.leagueOf(db.orm, board.subjectId);
        if (!league || league.season === board.windowKey) continue;
        if ((await leagues.unfinishedRounds(db.orm, board.subjectId, { season: board.windowKey })) === 0)
          await freeze(board.key);
      }
      return frozen;
    },
  };
}

const leagueNotFound = () => new NotFoundError('league_not_found', 'No league with this id.');

export type LeaderboardsService = ReturnType<typeof createLeaderboardsService>;
