import fastifyUnderPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import { ServiceUnavailableError, sendError } from '../app/errors.js';

const RETRY_AFTER_SECONDS = 5;

/**
 * Sheds load with a 503 when the event loop lags more than MAX_EVENT_LOOP_DELAY, so a saturated
 * instance answers fast and a load balancer can send the caller elsewhere. 0 turns it off.
 */
export default fp(async (fastify) => {
  const maxEventLoopDelay = fastify.config.maxEventLoopDelayMs;
  if (maxEventLoopDelay <= 0) return;
  await fastify.register(fastifyUnderPressure, {
    maxEventLoopDelay,
    exposeStatusRoute: false,
    retryAfter: RETRY_AFTER_SECONDS,
    pressureHandler: (_request, reply, type, value) => {
      reply.log.warn({ type, value }, 'under pressure: request refused');
      sendError(
        reply,
        new ServiceUnavailableError('overloaded', 'The service is overloaded; try again shortly.', RETRY_AFTER_SECONDS),
      );
    },
  });
}, { name: 'under-pressure', dependencies: ['env'] });
