import type { Redis } from 'ioredis';

/** How long a command waits for Redis before it fails (the caller then does without Redis). */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
/** How often a connection is pinged, and how long its answer may take before it is dropped. */
const PING_INTERVAL_MS = 2000;
const PING_TIMEOUT_MS = 1000;

/**
 * Pings a Redis connection every 2 s and drops it when an answer takes longer than 1 s, so that
 * ioredis reconnects: a cut network leaves a connection open and silent, and a subscriber (which
 * only listens) or a client whose commands each wait out their timeout would never notice.
 * While it reconnects, commands fail at once (with the offline queue off). Answers the function
 * that stops it.
 */
export function keepRedisConnectionLive(client: Redis): () => void {
  const timer = setInterval(() => {
    if (client.status !== 'ready') return;
    const deadline = setTimeout(() => client.disconnect(true), PING_TIMEOUT_MS);
    client.ping().then(
      () => clearTimeout(deadline),
      () => {
        clearTimeout(deadline);
        client.disconnect(true);
      },
    );
  }, PING_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
