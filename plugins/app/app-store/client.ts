import {
  AppStoreServerAPIClient,
  type ConsumptionRequest,
  type Environment,
  type NotificationHistoryResponse,
} from '@apple/app-store-server-library';
import type { AppleApiConfig, AppleConfig } from '../../../config/index.js';

/** The App Store Server API calls the service makes, through Apple's client (its ES256 bearer token). */
export interface AppStoreApi {
  notificationHistory(
    window: { start: Date; end: Date },
    paginationToken: string | null,
  ): Promise<NotificationHistoryResponse>;
  sendConsumption(transactionId: string, request: ConsumptionRequest): Promise<void>;
}

/** Apple's client, reaching a configured base URL (a stand-in in tests) instead of Apple's when one is set. */
class ConfiguredClient extends AppStoreServerAPIClient {
  constructor(
    api: AppleApiConfig,
    bundleId: string,
    environment: Environment,
    private readonly baseUrl: string | undefined,
  ) {
    super(api.privateKeyPem, api.keyId, api.issuerId, bundleId, environment);
  }

  protected override makeFetchRequest(
    path: string,
    query: URLSearchParams,
    method: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
  ): ReturnType<AppStoreServerAPIClient['makeFetchRequest']> {
    if (!this.baseUrl) return super.makeFetchRequest(path, query, method, body, headers);
    const url = `${this.baseUrl}${path}?${query}`;
    // The library reads `ok`, `status` and `json()`, which the platform's fetch answers alike.
    return fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : new Uint8Array(body) }),
      signal: AbortSignal.timeout(10_000),
    }) as unknown as ReturnType<AppStoreServerAPIClient['makeFetchRequest']>;
  }
}

/** Null when the API is not configured, or for the local StoreKit environments (no server API there). */
export function createAppStoreApi(config: AppleConfig): AppStoreApi | null {
  if (!config.api || config.environment === 'Xcode' || config.environment === 'LocalTesting') return null;
  const client = new ConfiguredClient(
    config.api,
    config.bundleId,
    config.environment as Environment,
    config.api.baseUrl,
  );
  return {
    notificationHistory: (window, paginationToken) =>
      client.getNotificationHistory(paginationToken, {
        startDate: window.start.getTime(),
        endDate: window.end.getTime(),
      }),
    sendConsumption: (transactionId, request) => client.sendConsumptionInformation(transactionId, request),
  };
}
