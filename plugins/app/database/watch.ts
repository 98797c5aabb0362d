import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';

/**
 * Watches the database from a connection of its own: a `select 1` every `intervalMs`. One that
 * fails, or has no answer within `timeoutMs`, marks the database down at once (a network cut
 * gives no error, only silence); the first that answers again marks it up. While it is down, the
 * pool refuses work at once and readiness answers 503, instead of every request waiting out its
 * own timeouts.
 *
 * A ping without an answer is not abandoned at once: over a cut network the answer arrives as
 * soon as the network heals, which is the quickest way to learn it did. Only after
 * `ABANDON_AFTER_MS` is the connection dropped and a new one tried (a server gone for good).
 */

export interface DatabaseWatchOptions {
  url: string;
  intervalMs: number;
  timeoutMs: number;
  log: FastifyBaseLogger;
  onDown(error: Error): void;
  onUp(): void;
}

export interface DatabaseWatch {
  /** Why the database is taken for down, or undefined while it answers. */
  readonly down: Error | undefined;
  stop(): void;
}

/** How long one attempt (connecting, then `select 1`) may take before it is given up for a new one. */
const ABANDON_AFTER_MS = 5000;

/** The error work gets while the database is down: SQLSTATE 08006, so it answers 503 database_unavailable. */
export class DatabaseUnreachableError extends Error {
  readonly code = '08006';
  constructor(reason: string) {
    super(`Connection terminated: the database is unreachable (${reason})`);
    this.name = 'DatabaseUnreachableError';
  }
}

/** Drops a client's connection now, whatever its state: its running query fails with `error`. */
export function destroyConnection(client: pg.Client | pg.PoolClient, error: Error): void {
  (client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy(error);
}

export function watchDatabase(options: DatabaseWatchOptions): DatabaseWatch {
  const { url, intervalMs, timeoutMs, log } = options;
  let client: pg.Client | undefined;
  /** A connection being opened, which stop() must end too: left alone, it would still be logging in when the database stops. */
  let connecting: pg.Client | undefined;
  let down: Error | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** The attempt under way, which later checks wait on rather than start another. */
  let attempt: { done: Promise<void>; startedAt: number } | undefined;
  /** Which attempt may still install its connection: a newer one, or none after stop(). */
  let current: object | undefined;

  const dropClient = () => {
    if (client) destroyConnection(client, new Error('database watch: connection dropped'));
    client = undefined;
  };

  const startAttempt = (): Promise<void> => {
    const owner = {};
    current = owner;
    const ping = async () => {
      if (!client) {
        const next = new pg.Client({
          connectionString: url,
          // Never shorter than the ping's own timeout: a process busy for seconds (starting up on a
          // loaded machine) fires the driver's timer before it reads the server's answer, which
          // would mark a healthy database down.
          connectionTimeoutMillis: Math.max(ABANDON_AFTER_MS, timeoutMs),
          keepAlive: true,
          application_name: 'pack-service-watch',
        });
        // A connection the server ended (a restart) is not used for the next ping.
        const forget = () => {
          if (client === next) client = undefined;
        };
        next.on('error', forget);
        next.on('end', forget);
        connecting = next;
        try {
          await next.connect();
        } catch (error) {
          destroyConnection(next, error as Error);
          throw error;
        } finally {
          if (connecting === next) connecting = undefined;
        }
        // An attempt given up meanwhile must not install its connection over a newer one.
        if (current !== owner || stopped) {
          destroyConnection(next, new Error('database watch: attempt given up'));
          throw new Error('attempt given up');
        }
        client = next;
      }
      await client.query('select 1');
    };
    return (async () => {
      const reused = client !== undefined;
      try {
        await ping();
      } catch (error) {
        // A connection that failed may be the only thing gone (the server restarted since the
        // last ping): the database is down only if a new connection fails too.
        if (!reused || stopped || current !== owner) throw error;
        dropClient();
        await ping();
      }
    })();
  };

  const markDown = (error: Error) => {
    if (down) return;
    down = error;
    log.error({ err: error }, 'database unreachable: refusing work until it answers again');
    options.onDown(error);
  };

  function check(): void {
    if (!attempt) attempt = { done: startAttempt(), startedAt: performance.now() };
    const running = attempt;
    let settled = false;
    const finish = (outcome: { ok: true } | { ok: false; error: Error; silent: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // stop() drops the connection, which fails the attempt under way: that is no outage.
      if (stopped) return;
      if (outcome.ok) {
        attempt = undefined;
        if (down) {
          down = undefined;
          log.warn('database answers again');
          options.onUp();
        }
      } else {
        markDown(outcome.error);
        if (!outcome.silent || performance.now() - running.startedAt >= ABANDON_AFTER_MS) {
          attempt = undefined;
          current = undefined;
          dropClient();
        }
      }
      timer = setTimeout(check, intervalMs).unref();
    };
    // An answer already received but not yet read (the event loop was busy) is read before the
    // timeout counts: setImmediate runs after the poll phase that delivers it.
    const deadline = setTimeout(
      () =>
        setImmediate(() => finish({ ok: false, error: new Error(`no answer within ${timeoutMs} ms`), silent: true })),
      timeoutMs,
    ).unref();
    running.done.then(
      () => finish({ ok: true }),
      (error: Error) => finish({ ok: false, error, silent: false }),
    );
  }

  timer = setTimeout(check, intervalMs).unref();
  return {
    get down() {
      return down;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      current = undefined;
      // A stopped watch knows nothing: work after the database was closed gets the pool's own error.
      down = undefined;
      dropClient();
      if (connecting) destroyConnection(connecting, new Error('database watch: stopped'));
      connecting = undefined;
    },
  };
}
