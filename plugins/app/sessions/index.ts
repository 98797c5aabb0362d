import type { JWT } from '@fastify/jwt';
import fp from 'fastify-plugin';
import type { MobileProvider } from '../../../schemas/enums.js';
import { CLOCK_TOLERANCE_MS } from '../auth/tokens.js';
import { keepRedisConnectionLive, REDIS_COMMAND_TIMEOUT_MS } from '../../external/redis-keepalive.js';
import { createIdTokenVerifier, type IdTokenVerifier } from './providers.js';
import { createSessionsRepository, REVOCATION_CHANNEL } from './repository.js';
import { decodeEntries, encodeEntries, type RevocationEntry, RevocationList } from './revocations.js';
import { createSessionsService, type SessionsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sessions of our own; null when AUTH_SESSIONS is off. */
    sessions: SessionsService | null;
  }
}

/** A full reload of the revoked set, in case a bus message was lost (Redis down, a dropped LISTEN). */
const RESYNC_INTERVAL_MS = 60_000;
/** Ended sessions and expired revocations are deleted every this many resyncs. */
const PURGE_EVERY = 60;

/**
 * Sessions of our own: mobile sign-in, refresh rotation, logout. Every instance keeps the revoked
 * set in memory, loaded at start, kept in step by PostgreSQL LISTEN/NOTIFY (or Redis pub/sub when
 * REDIS_URL is set), and reloaded after any gap in that feed and every minute.
 */
export default fp(
  async (fastify) => {
    const config = fastify.config.sessions;
    const sessionJwt = (fastify.jwt as unknown as { session?: JWT }).session;
    if (!config || !sessionJwt) {
      fastify.decorate('sessions', null);
      return;
    }
    const repository = createSessionsRepository(fastify.db, {
      accessTtlMs: config.accessTtlMs,
      sessionTtlMs: config.sessionTtlMs,
      clockToleranceMs: CLOCK_TOLERANCE_MS,
    });
    const revocations = new RevocationList();
    const lookupIntervalMs = fastify.config.auth.jwksLookupIntervalMs;
    const verifiers: Partial<Record<MobileProvider, IdTokenVerifier>> = {};
    for (const provider of Object.values(config.providers)) {
      verifiers[provider.provider] = await createIdTokenVerifier(provider, lookupIntervalMs);
    }

    async function reload(): Promise<void> {
      revocations.prune();
      for (const entry of await repository.activeRevocations()) revocations.add(entry);
    }
    const reloadQuietly = () =>
      reload().catch((error) =>
        fastify.log.warn({ err: error }, 'could not reload the revoked sessions; retrying on the next resync'),
      );
    const apply = (payload: string) => {
      for (const entry of decodeEntries(payload)) revocations.add(entry);
    };

    // Registered first: if the start fails below, whatever was opened is still closed.
    const stops: (() => Promise<void>)[] = [];
    let timer: NodeJS.Timeout | undefined;
    fastify.addHook('onClose', async () => {
      clearInterval(timer);
      await Promise.all(stops.map((stop) => stop()));
    });

    // The bus: Redis when configured (the instances already share it), else PostgreSQL's NOTIFY.
    let broadcast = async (_entries: RevocationEntry[]) => {};
    if (fastify.config.redisUrl) {
      const { Redis } = await import('ioredis');
      const options = { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: true };
      // A logout never waits on a silent network for long: its publish gives up (and the resync covers it).
      const publisher = new Redis(fastify.config.redisUrl, {
        ...options,
        enableOfflineQueue: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      });
      const subscriber = new Redis(fastify.config.redisUrl, options);
      for (const client of [publisher, subscriber])
        client.on('error', (error) => fastify.log.warn({ err: error }, 'revocation bus (Redis) error'));
      stops.push(async () => {
        await Promise.all([publisher, subscriber].map((client) => client.quit().catch(() => client.disconnect())));
      });
      let connectedBefore = false;
      subscriber.on('ready', () => {
        // Subscribed on every connection (ioredis renews only subscriptions it saw confirmed, and
        // one asked for while Redis was down never was); after a reconnect, messages may have been missed.
        subscriber
          .subscribe(REVOCATION_CHANNEL)
          .catch((error) => fastify.log.warn({ err: error }, 'could not subscribe to the revocation bus (Redis)'));
        if (connectedBefore) void reloadQuietly();
        connectedBefore = true;
      });
      subscriber.on('message', (_channel: string, payload: string) => apply(payload));
      // A subscriber only listens: a cut network would go unnoticed without its pings.
      const stopKeepAlive = keepRedisConnectionLive(subscriber);
      stops.push(async () => stopKeepAlive());
      await Promise.all([publisher.connect(), subscriber.connect()]).catch((error) =>
        fastify.log.warn(
          { err: error },
          'revocation bus (Redis) unreachable at start; other instances learn of logouts at the next resync',
        ),
      );
      broadcast = async (entries) => {
        await publisher
          .publish(REVOCATION_CHANNEL, encodeEntries(entries))
          .catch((error) =>
            fastify.log.warn(
              { err: error },
              'could not publish a revocation; other instances learn of it at the next resync',
            ),
          );
      };
    } else {
      stops.push(await fastify.db.listen(REVOCATION_CHANNEL, apply, () => void reloadQuietly()));
    }
    await reload();

    let ticks = 0;
    timer = setInterval(() => {
      ticks += 1;
      void reloadQuietly();
      if (ticks % PURGE_EVERY === 0)
        repository.purge().catch((error) => fastify.log.warn({ err: error }, 'session purge failed'));
    }, RESYNC_INTERVAL_MS);
    timer.unref();

    fastify.decorate(
      'sessions',
      createSessionsService({
        config,
        repository,
        revocations,
        verifiers,
        sign: (payload) => sessionJwt.sign(payload),
        broadcast,
        log: fastify.log,
      }),
    );
  },
  { name: 'sessions', dependencies: ['env', 'db', 'jwt'] },
);
