import type { FastifyInstance } from 'fastify';
import adminUserRoutes from './admin/users/index.js';
import healthRoutes from './health/index.js';
import userRoutes from './user/index.js';

/** Every endpoint group under /api, one plugin each. */
export default async function apiRoutes(app: FastifyInstance) {
  await app.register(healthRoutes, { prefix: '/health' });
  await app.register(userRoutes, { prefix: '/user' });
  await app.register(adminUserRoutes, { prefix: '/admin/users' });
}
