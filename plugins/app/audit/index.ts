import fp from 'fastify-plugin';
import { type AuditService, createAuditService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    audit: AuditService;
  }
}

/** The audit log: written by the domains that change the catalog and the teams, read by admins. */
export default fp(
  async (fastify) => {
    fastify.decorate('audit', createAuditService(fastify.db));
  },
  { name: 'audit', dependencies: ['db'] },
);
