import { eq, sql } from 'drizzle-orm';
import { type AppConfigRow, appConfig } from '../../../db/schema.js';
import type { AppConfigSettings } from '../../../schemas/misc.js';
import type { Database } from '../database/index.js';

/** SQL of the mobile app configuration: one row. Writes run in the caller's transaction. */

export const APP_CONFIG_CHANNEL = 'app_config_changed';
const ROW_ID = 'app';

export async function readAppConfig(db: Database): Promise<AppConfigRow | undefined> {
  const [row] = await db.select().from(appConfig).where(eq(appConfig.id, ROW_ID));
  return row;
}

/**
 * The row, locked until the transaction ends; made first (version 0, the default's document)
 * when no edit was ever saved, so that two first edits queue on one row like any others.
 */
export async function lockAppConfig(tx: Database, initial: AppConfigSettings): Promise<AppConfigRow> {
  await tx.insert(appConfig).values({ id: ROW_ID, document: initial, version: 0 }).onConflictDoNothing();
  const [row] = await tx.select().from(appConfig).where(eq(appConfig.id, ROW_ID)).for('update');
  return row as AppConfigRow;
}

export async function writeAppConfig(
  tx: Database,
  change: { document: AppConfigSettings; version: number; updatedBy: string; updatedAt: Date },
): Promise<AppConfigRow> {
  const [row] = await tx.update(appConfig).set(change).where(eq(appConfig.id, ROW_ID)).returning();
  return row as AppConfigRow;
}

/** Tells every instance (this one too) that the configuration changed; sent when the transaction commits. */
export async function notifyAppConfigChange(tx: Database, version: number): Promise<void> {
  await tx.execute(sql`select pg_notify(${APP_CONFIG_CHANNEL}, ${String(version)})`);
}
