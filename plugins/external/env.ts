import fp from 'fastify-plugin';
import type { AppConfig } from '../../config/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
  }
}

/** Decorates the validated configuration (config/) so every plugin reads the same values. */
export default fp<{ config: AppConfig }>(
  async (fastify, { config }) => {
    fastify.decorate('config', config);
    if (config.auth.keySource.kind === 'secret' && config.auth.keySource.isDevSecret) {
      fastify.log.warn(
        'AUTH_JWT_SECRET is not set: using the documented dev secret. Anyone can mint tokens; never use it in production.',
      );
    }
  },
  { name: 'env' },
);
