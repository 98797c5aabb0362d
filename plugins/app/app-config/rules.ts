import type { AppConfig, AppConfigSettings } from '../../../schemas/misc.js';

/**
 * What GET /api/app-config answers before any configuration was ever read from the database (an
 * instance that started while it was away, or a service whose admins never saved one): every app
 * release supported, no flag on, no link. Version 0: it was never saved.
 */
export const DEFAULT_APP_CONFIG: AppConfig = {
  minimumVersions: { ios: '0', android: '0' },
  featureFlags: {},
  supportLinks: {},
  version: 0,
  updatedAt: null,
};

/** The settings part of a configuration: what an edit replaces, and what the audit log records. */
export function settingsOf(config: AppConfig): AppConfigSettings {
  return {
    minimumVersions: config.minimumVersions,
    featureFlags: config.featureFlags,
    supportLinks: config.supportLinks,
  };
}

/**
 * Whether a configuration read from the database should replace the one held in memory. Reads
 * may finish out of order (a reload after a notification racing one after a reconnect): an older
 * version never replaces a newer one.
 */
export function supersedes(candidate: AppConfig, held: AppConfig): boolean {
  return candidate.version > held.version;
}

/** An edit is made from the version it read; anything else means another edit came first. */
export function isCurrentEdit(expectedVersion: number, storedVersion: number): boolean {
  return expectedVersion === storedVersion;
}
