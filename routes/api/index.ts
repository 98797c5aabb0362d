import type { FastifyInstance } from 'fastify';
import authRoutes from './auth/index.js';
import auditLogRoutes from './admin/audit-log/index.js';
import adminCollectibleRoutes from './admin/collectibles/index.js';
import adminPackRoutes from './admin/packs/index.js';
import adminTeamRoutes from './admin/teams/index.js';
import adminUserRoutes from './admin/users/index.js';
import adminWalletRoutes from './admin/wallets/index.js';
import adminOrderRoutes from './admin/orders/index.js';
import adminPriceRoutes from './admin/prices/index.js';
import adminProductRoutes from './admin/products/index.js';
import checkoutRoutes from './checkout/index.js';
import cronRoutes from './cron/index.js';
import webhookRoutes from './webhooks/index.js';
import productRoutes from './products/index.js';
import healthRoutes from './health/index.js';
import lockerRoomRoutes from './locker-room/index.js';
import publicPackRoutes from './packs/index.js';
import purchaseRoutes from './packs/purchase.js';
import teamRoutes from './teams/index.js';
import userRoutes from './user/index.js';
import walletRoutes from './wallet/index.js';

/** Every endpoint group under /api, one plugin each. */
export default async function apiRoutes(app: FastifyInstance) {
  await app.register(healthRoutes, { prefix: '/health' });
  await app.register(authRoutes, { prefix: '/auth' });
  await app.register(userRoutes, { prefix: '/user' });
  await app.register(adminUserRoutes, { prefix: '/admin/users' });
  await app.register(publicPackRoutes, { prefix: '/packs' });
  await app.register(adminPackRoutes, { prefix: '/admin/packs' });
  await app.register(adminCollectibleRoutes, { prefix: '/admin/collectibles' });
  await app.register(auditLogRoutes, { prefix: '/admin/audit-log' });
  await app.register(teamRoutes, { prefix: '/teams' });
  await app.register(adminTeamRoutes, { prefix: '/admin/teams' });
  await app.register(purchaseRoutes, { prefix: '/packs' });
  await app.register(walletRoutes, { prefix: '/wallet' });
  await app.register(adminWalletRoutes, { prefix: '/admin/wallets' });
  await app.register(lockerRoomRoutes, { prefix: '/locker-room' });
  await app.register(productRoutes, { prefix: '/products' });
  await app.register(adminProductRoutes, { prefix: '/admin/products' });
  await app.register(adminPriceRoutes, { prefix: '/admin/prices' });
  await app.register(checkoutRoutes, { prefix: '/checkout' });
  await app.register(webhookRoutes, { prefix: '/webhooks' });
  await app.register(adminOrderRoutes, { prefix: '/admin/orders' });
  await app.register(cronRoutes, { prefix: '/cron' });
}
