import fastifyUnderPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import { overloadedError, sendError } from '../app/errors.js';

const RETRY_AFTER_SECONDS = 5;
/** How long the catalog waits when the loop lags: closed-loop clients send less, the money paths get the CPU. */
const CATALOG_HOLD_MS = 100;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A public catalog read: held back first under load (past CATALOG_MAX_EVENT_LOOP_DELAY), so
     * the money paths (purchases, opens, checkout, webhooks) get the CPU. Its responses are
     * cacheable: a CDN in front takes most of this traffic anyway.
     */
    lowPriority?: boolean;
  }
}

/**
 * When the event loop lags (its mean delay over each second):
 * - past CATALOG_MAX_EVENT_LOOP_DELAY, public catalog reads (`config.lowPriority`) wait 100 ms
 *   before they are answered. Refusing them would not help: a 503 costs as much CPU as a cached
 *   read, while a wait slows the clients that flood it and leaves the CPU to the money paths;
 * - past MAX_EVENT_LOOP_DELAY, every request is refused with 503 `overloaded` and Retry-After,
 *   so a saturated instance answers fast and a load balancer can send the caller elsewhere.
 * MAX_EVENT_LOOP_DELAY=0 turns both off.
 */
export default fp(async (fastify) => {
  const { maxEventLoopDelayMs, catalogMaxEventLoopDelayMs } = fastify.config;
  if (maxEventLoopDelayMs <= 0) return;
  const lowest = catalogMaxEventLoopDelayMs > 0 ? Math.min(catalogMaxEventLoopDelayMs, maxEventLoopDelayMs) : maxEventLoopDelayMs;
  await fastify.register(fastifyUnderPressure, {
    maxEventLoopDelay: lowest,
    exposeStatusRoute: false,
    retryAfter: RETRY_AFTER_SECONDS,
    pressureHandler: (request, reply, type, value) => {
      if (type === 'eventLoopDelay' && (value ?? 0) <= maxEventLoopDelayMs) {
        // Between the two bounds the catalog waits its turn; the rest goes on.
        if (request.routeOptions.config?.lowPriority) return new Promise<void>((resolve) => setTimeout(resolve, CATALOG_HOLD_MS));
        return;
      }
      reply.log.warn({ type, value }, 'under pressure: request refused');
      sendError(reply, overloadedError(RETRY_AFTER_SECONDS));
    },
  });
}, { name: 'under-pressure', dependencies: ['env'] });
