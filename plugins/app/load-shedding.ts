import type { FastifyRequest, onRequestAbortHookHandler, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import underPressurePlugin from '../external/under-pressure.js';
import { overloadedError, sendError } from './errors.js';

const RETRY_AFTER_SECONDS = 5;
/** How long the catalog waits when the loop lags: closed-loop clients send less, the money paths get the CPU. */
const CATALOG_HOLD_MS = 100;

/**
 * Keeps the money paths' latency under load:
 * - while CATALOG_YIELD_WRITES writes are in progress on the instance, or the event loop lags
 *   past CATALOG_MAX_EVENT_LOOP_DELAY (its mean delay over each second), public catalog reads
 *   (`config.lowPriority`) wait 100 ms before they are answered. Refusing them would not help: a
 *   503 costs as much CPU as a cached read, while a wait slows the clients that flood the
 *   catalog and leaves the CPU to the writes;
 * - past MAX_EVENT_LOOP_DELAY, every request is refused with 503 `overloaded` and Retry-After,
 *   so a saturated instance answers fast and a load balancer can send the caller elsewhere.
 * MAX_EVENT_LOOP_DELAY=0 turns all of it off.
 */
export default fp(
  async (fastify) => {
    const { maxEventLoopDelayMs, catalogMaxEventLoopDelayMs, catalogYieldWrites } = fastify.config;
    if (maxEventLoopDelayMs <= 0) return;
    if (catalogYieldWrites > 0) {
      // Writes (purchases, opens, checkout, webhooks, admin changes) in progress on this instance:
      // while there are many, catalog reads wait, at once rather than after a second of lag. The
      // hooks are the routes' own, so a catalog read runs one check and nothing else.
      let writesInFlight = 0;
      const counted = new WeakSet<FastifyRequest>();
      const holdWhileWritesRun: onRequestHookHandler = (_request, _reply, done) => {
        if (writesInFlight >= catalogYieldWrites) setTimeout(done, CATALOG_HOLD_MS);
        else done();
      };
      const countWrite: onRequestHookHandler = (request, _reply, done) => {
        counted.add(request);
        writesInFlight += 1;
        done();
      };
      const uncount = (request: FastifyRequest) => {
        if (counted.delete(request)) writesInFlight -= 1;
      };
      const finishWrite: onResponseHookHandler = (request, _reply, done) => {
        uncount(request);
        done();
      };
      const abortWrite: onRequestAbortHookHandler = (request, done) => {
        uncount(request);
        done();
      };
      const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
      fastify.addHook('onRoute', (route) => {
        const methods = [route.method].flat();
        if (route.config?.lowPriority) route.onRequest = [holdWhileWritesRun, ...[route.onRequest ?? []].flat()];
        else if (methods.some((method) => !READS.has(method))) {
          route.onRequest = [...[route.onRequest ?? []].flat(), countWrite];
          route.onResponse = [...[route.onResponse ?? []].flat(), finishWrite];
          route.onRequestAbort = [...[route.onRequestAbort ?? []].flat(), abortWrite];
        }
      });
    }
    const lowest =
      catalogMaxEventLoopDelayMs > 0 ? Math.min(catalogMaxEventLoopDelayMs, maxEventLoopDelayMs) : maxEventLoopDelayMs;
    await fastify.register(underPressurePlugin, {
      maxEventLoopDelayMs: lowest,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      pressureHandler: (request, reply, type, value) => {
        if (type === 'eventLoopDelay' && (value ?? 0) <= maxEventLoopDelayMs) {
          // Between the two bounds the catalog waits its turn; the rest goes on.
          if (request.routeOptions.config?.lowPriority)
            return new Promise<void>((resolve) => setTimeout(resolve, CATALOG_HOLD_MS));
          return;
        }
        reply.log.warn({ type, value }, 'under pressure: request refused');
        sendError(reply, overloadedError(RETRY_AFTER_SECONDS));
      },
    });
  },
  { name: 'load-shedding', dependencies: ['env'] },
);
