import fastifyUnderPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A public catalog read: held back first under load (CATALOG_YIELD_WRITES,
     * CATALOG_MAX_EVENT_LOOP_DELAY), so the money paths (purchases, opens, checkout, webhooks)
     * get the CPU. Its responses are cacheable: a CDN in front takes most of this traffic anyway.
     */
    lowPriority?: boolean;
  }
}

export interface UnderPressureOptions {
  /** The event-loop delay (its mean over each second) past which `pressureHandler` decides. */
  maxEventLoopDelayMs: number;
  retryAfterSeconds: number;
  /** What a request meets while the loop lags (plugins/app/load-shedding.ts). */
  pressureHandler: NonNullable<FastifyUnderPressureOptions['pressureHandler']>;
}

/** @fastify/under-pressure on the event-loop delay, its status route off. */
export default fp<UnderPressureOptions>(
  async (fastify, { maxEventLoopDelayMs, retryAfterSeconds, pressureHandler }) => {
    await fastify.register(fastifyUnderPressure, {
      maxEventLoopDelay: maxEventLoopDelayMs,
      exposeStatusRoute: false,
      retryAfter: retryAfterSeconds,
      pressureHandler,
    });
  },
  { name: 'under-pressure' },
);
