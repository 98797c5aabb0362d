import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { DATABASE_TIMEOUTS } from './connection.js';
import { destroyConnection } from './watch.js';

/**
 * Calls `onNotify` for each NOTIFY on `channel`, from any instance. A dedicated connection
 * listens and reconnects when lost, calling `onGap` when it is lost and again once it listens
 * anew, since notifications may have been missed in between. Resolves with the function that
 * stops listening.
 */
export type Listen = (
  channel: string,
  onNotify: (payload: string) => void,
  onGap: () => void,
) => Promise<() => Promise<void>>;

/** LISTEN connections to the database at `url`, and what the database's watch does to them all. */
export interface Listeners {
  listen: Listen;
  /** The database went away: drop every LISTEN connection now rather than at its keep-alive. */
  dropAll(error: Error): void;
  /** The database is back: reconnect now rather than when the back-off says. */
  wakeAll(): void;
  stopAll(): Promise<void>;
}

export function createListeners(url: string, log: FastifyBaseLogger): Listeners {
  const listeners = new Set<() => Promise<void>>();
  /** Per LISTEN connection: drop it (the database went away) and reconnect now (it is back). */
  const listenerControls = new Set<{ drop(error: Error): void; wake(): void }>();
  const listen: Listen = async (channel, onNotify, onGap) => {
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connectListener = async (delayMs: number, reconnecting: boolean): Promise<void> => {
      // keepAlive: a half-open connection (a silent network cut) is noticed instead of dropping notifications unseen.
      const next = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
        application_name: 'pack-service-listen',
        keepAlive: true,
      });
      const reconnect = (error?: Error) => {
        if (stopped || client !== next) return;
        log.warn({ err: error, channel }, 'LISTEN connection lost; reconnecting');
        client = undefined;
        onGap();
        retry = setTimeout(() => {
          retry = undefined;
          void connectListener(Math.min(delayMs * 2, 30_000), true);
        }, delayMs);
      };
      client = next;
      next.on('notification', (message) => onNotify(message.payload ?? ''));
      next.on('error', reconnect);
      next.on('end', () => reconnect());
      try {
        await next.connect();
        await next.query(`listen ${next.escapeIdentifier(channel)}`);
        // What happened while nobody listened is unknown: treat it as a change.
        if (reconnecting && !stopped) {
          log.info({ channel }, 'LISTEN connection restored');
          onGap();
        }
      } catch (error) {
        await next.end().catch(() => {});
        reconnect(error as Error);
      }
    };
    await connectListener(500, false);
    const control = {
      drop: (error: Error) => {
        if (client) destroyConnection(client, error);
      },
      // The database is back: reconnect now rather than when the back-off says.
      wake: () => {
        if (stopped || client || !retry) return;
        clearTimeout(retry);
        retry = undefined;
        void connectListener(500, true);
      },
    };
    listenerControls.add(control);
    const stop = async () => {
      stopped = true;
      clearTimeout(retry);
      listeners.delete(stop);
      listenerControls.delete(control);
      await client?.end().catch(() => {});
    };
    listeners.add(stop);
    return stop;
  };

  return {
    listen,
    dropAll: (error) => {
      for (const control of listenerControls) control.drop(error);
    },
    wakeAll: () => {
      for (const control of listenerControls) control.wake();
    },
    stopAll: async () => {
      await Promise.all([...listeners].map((stop) => stop()));
    },
  };
}
