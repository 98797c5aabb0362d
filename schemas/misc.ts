import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Int, Nullable, StrictObject, Timestamp } from './common.js';

/** The service's version, commit and API document (GET /api/version), and the mobile app's launch configuration. */

export const VersionInfo = Envelope(
  StrictObject({
    version: Type.String({ maxLength: 64, description: 'The service release (package.json)', examples: ['0.1.0'] }),
    commit: Nullable(
      Type.String({
        pattern: '^[0-9a-f]{7,40}$',
        maxLength: 40,
        description:
          'The git commit the running build was made from, recorded by `npm run build`; null when unknown (run from the sources, or built outside a git checkout without SOURCE_COMMIT)',
      }),
    ),
    apiVersion: Type.String({
      maxLength: 64,
      description: 'The API version: `info.version` of the OpenAPI document',
      examples: ['0.1.0'],
    }),
    openapiSha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      maxLength: 64,
      description:
        'SHA-256 (hex) of the OpenAPI document this instance serves, as the bytes of GET /docs/json: a client can tell whether the API it was generated from changed',
    }),
  }),
);
export type VersionInfo = Static<typeof VersionInfo>['data'];

/** `1`, `1.4` or `1.4.2`: an app release as the stores show it. */
const AppVersion = Type.String({
  pattern: '^(0|[1-9][0-9]{0,5})(\\.(0|[1-9][0-9]{0,5})){0,2}$',
  maxLength: 20,
  description: 'An app release, `major[.minor[.patch]]`',
  examples: ['2.4.0'],
});
/** Flag and link names: what app code looks up, so plain identifiers. */
const NAME_PATTERN = '^[a-z][a-zA-Z0-9_.-]{0,63}$';
export const MAX_FLAGS = 100;
export const MAX_LINKS = 50;

export const MinimumVersions = StrictObject(
  { ios: AppVersion, android: AppVersion },
  { description: 'The oldest app release still supported, per platform: older apps should ask to be updated' },
);

export const FeatureFlags = Type.Record(Type.String({ pattern: NAME_PATTERN }), Type.Boolean(), {
  maxProperties: MAX_FLAGS,
  additionalProperties: false,
  description: `Feature flags by name (\`${NAME_PATTERN}\`), on or off; at most ${MAX_FLAGS}`,
  examples: [{ leagues: true, 'trading.beta': false }],
});

export const SupportLinks = Type.Record(
  Type.String({ pattern: NAME_PATTERN }),
  Type.String({ maxLength: 2048, format: 'uri', pattern: '^(https://|mailto:)' }),
  {
    maxProperties: MAX_LINKS,
    additionalProperties: false,
    description: `Support links by name: https URLs (or mailto:); at most ${MAX_LINKS}`,
    examples: [{ help: 'https://support.example.com', contact: 'mailto:help@example.com' }],
  },
);

/** What an admin sets: the whole configuration at once. */
export const AppConfigSettings = StrictObject({
  minimumVersions: MinimumVersions,
  featureFlags: FeatureFlags,
  supportLinks: SupportLinks,
});
export type AppConfigSettings = Static<typeof AppConfigSettings>;

export const AppConfig = Type.Object(
  {
    ...AppConfigSettings.properties,
    version: Int({ description: 'Counts the edits: 0 for the built-in default, never saved; send it back with PUT' }),
    updatedAt: Nullable(Timestamp),
  },
  { $id: 'AppConfig', additionalProperties: false },
);
export type AppConfig = Static<typeof AppConfig>;

export const AppConfigResponse = Envelope(Type.Ref(AppConfig));

export const UpdateAppConfigBody = StrictObject(
  {
    ...AppConfigSettings.properties,
    version: Int({
      description:
        'The `version` this edit was made from (as last read): when the stored configuration has moved on, the edit is refused with 409 `app_config_changed`',
    }),
  },
  { $id: 'UpdateAppConfigBody' },
);
export type UpdateAppConfigBody = Static<typeof UpdateAppConfigBody>;
