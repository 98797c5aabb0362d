// The database's tables, one file per domain under db/schema/. This file stays the one entry
// point: drizzle.config.ts and every importer read the schema from here.
export * from './schema/users.js';
export * from './schema/teams.js';
export * from './schema/catalog.js';
export * from './schema/audit.js';
export * from './schema/economy.js';
export * from './schema/rewards.js';
export * from './schema/idempotency.js';
export * from './schema/jobs.js';
export * from './schema/checkout.js';
export * from './schema/sessions.js';
export * from './schema/events.js';
export * from './schema/quests.js';
export * from './schema/leagues.js';
export * from './schema/leaderboards.js';
export * from './schema/app-config.js';
export * from './schema/dashboard.js';
export * from './schema/webhooks.js';
export * from './schema/google-play.js';
export * from './schema/app-store.js';
