import type { AppConfigRow } from '../../../db/schema.js';
import type { AppConfig, AppConfigSettings, UpdateAppConfigBody } from '../../../schemas/misc.js';
import type { AuditService } from '../audit/service.js';
import type { DatabaseHandle } from '../database/index.js';
import { etagOf } from '../packs/catalog-cache.js';
import { appConfigChanged } from './errors.js';
import { lockAppConfig, notifyAppConfigChange, readAppConfig, writeAppConfig } from './repository.js';
import { DEFAULT_APP_CONFIG, isCurrentEdit, settingsOf, supersedes } from './rules.js';

/** The configuration held in memory, with its response body serialized once and that body's ETag. */
export interface HeldAppConfig {
  config: AppConfig;
  body: Buffer;
  etag: string;
}

function toAppConfig(row: AppConfigRow): AppConfig {
  const document = row.document as AppConfigSettings;
  return {
    minimumVersions: { ios: document.minimumVersions.ios, android: document.minimumVersions.android },
    featureFlags: document.featureFlags,
    supportLinks: document.supportLinks,
    version: row.version,
    updatedAt: row.updatedAt ? row.updatedAt.toISOString() : null,
  };
}

function held(config: AppConfig): HeldAppConfig {
  const body = Buffer.from(JSON.stringify({ success: true, data: config }));
  return { config, body, etag: etagOf(body) };
}

/**
 * The mobile app configuration: stored in PostgreSQL, answered from memory. Reads never touch
 * the database, so they are answered while it is away (the last value read, or the default
 * before any was); every instance re-reads it when told of an edit (refresh).
 */
export function createAppConfigService(db: DatabaseHandle, audit: AuditService) {
  let current = held(DEFAULT_APP_CONFIG);
  const keep = (config: AppConfig) => {
    if (supersedes(config, current.config)) current = held(config);
  };

  return {
    /** What GET /api/app-config answers now. */
    current: (): HeldAppConfig => current,

    /** Reads the stored configuration into memory; rejects when the database does not answer (memory keeps what it had). */
    async refresh(): Promise<void> {
      const row = await readAppConfig(db.orm);
      if (row) keep(toAppConfig(row));
    },

    /** Replaces the whole configuration, if `version` is still the stored one; audited, and announced to every instance. */
    async update(actorId: string, body: UpdateAppConfigBody): Promise<AppConfig> {
      const { version, ...settings } = body;
      const saved = await db.transaction(async (tx) => {
        const stored = await lockAppConfig(tx, settingsOf(DEFAULT_APP_CONFIG));
        if (!isCurrentEdit(version, stored.version)) throw appConfigChanged(version, stored.version);
        const at = new Date();
        const row = await writeAppConfig(tx, {
          document: settings,
          version: stored.version + 1,
          updatedBy: actorId,
          updatedAt: at,
        });
        await audit.record(
          tx,
          {
            actorId,
            action: 'app_config.update',
            targetType: 'app_config',
            targetId: row.id,
            teamId: null,
            before: stored.document,
            after: settings,
          },
          at,
        );
        await notifyAppConfigChange(tx, row.version);
        return toAppConfig(row);
      });
      keep(saved);
      return saved;
    },
  };
}

export type AppConfigService = ReturnType<typeof createAppConfigService>;
