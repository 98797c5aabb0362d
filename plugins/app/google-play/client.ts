import { createSigner } from 'fast-jwt';
import type { GooglePlayConfig } from '../../../config/index.js';
import { PlayApiError } from './errors.js';
import { type ProductPurchase, readProductPurchase, readVoidedPurchase, type VoidedPurchase } from './rules.js';

/**
 * The Google Play Developer API (Android Publisher v3) over plain fetch, as a service account:
 * an RS256 JWT bearer grant for an access token (cached until shortly before it expires), then
 * `purchases.products.get`, `purchases.products.consume` and `voidedpurchases.list`. Every call
 * has a timeout; what goes wrong is a PlayApiError (Google's status, or null when unreached).
 */

const SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
const TIMEOUT_MS = 10_000;
/** A token is renewed this long before Google says it expires. */
const TOKEN_EARLY_MS = 5 * 60_000;
/** Pages one listing of voided purchases reads at most (1,000 each). */
const MAX_VOIDED_PAGES = 50;

export interface PlayClientOptions {
  timeoutMs?: number;
}

/** Google's error body `{ error: { code, message, status, errors: [{ reason }] } }`, read for the log and the reason. */
async function errorOf(response: Response, what: string, auth = false): Promise<PlayApiError> {
  let reason: string | undefined;
  let message = '';
  try {
    const body = (await response.json()) as {
      error?: { message?: string; status?: string; errors?: { reason?: string }[] } | string;
      error_description?: string;
    };
    if (typeof body.error === 'string') {
      reason = body.error;
      message = body.error_description ?? '';
    } else {
      reason = body.error?.errors?.[0]?.reason ?? body.error?.status;
      message = body.error?.message ?? '';
    }
  } catch {
    // Not JSON: the status says enough.
  }
  return new PlayApiError(
    `${what}: Google answered ${response.status}${message ? ` (${message.slice(0, 200)})` : ''}`,
    response.status,
    { reason, auth },
  );
}

export function createPlayClient(config: GooglePlayConfig, options: PlayClientOptions = {}) {
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const { serviceAccount } = config;
  const sign = createSigner({
    key: serviceAccount.privateKeyPem,
    algorithm: 'RS256',
    ...(serviceAccount.privateKeyId ? { kid: serviceAccount.privateKeyId } : {}),
  });
  const applicationPath = `/androidpublisher/v3/applications/${encodeURIComponent(config.packageName)}`;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function call(url: URL, init: RequestInit, what: string, auth = false): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    } catch (error) {
      throw new PlayApiError(`${what}: Google was not reached (${(error as Error).message})`, null, {
        cause: error,
        auth,
      });
    }
  }

  /** An access token for the scope: the JWT bearer grant (RFC 7523), as Google's OAuth server takes it. */
  async function fetchToken(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const assertion = sign({
      iss: serviceAccount.clientEmail,
      scope: SCOPE,
      aud: config.tokenUrl.href,
      iat: now,
      exp: now + 3600,
    });
    const response = await call(
      config.tokenUrl,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
      },
      'the OAuth token request',
      true,
    );
    if (!response.ok) throw await errorOf(response, 'the OAuth token request', true);
    const body = (await response.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new PlayApiError('the OAuth token request: no access_token in the answer', response.status, { auth: true });
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000;
    cached = { token: body.access_token, renewAt: Date.now() + Math.max(lifetimeMs - TOKEN_EARLY_MS, lifetimeMs / 2) };
    return body.access_token;
  }

  /** The cached token, or one new token shared by every call waiting for it. */
  function accessToken(): Promise<string> {
    if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.token);
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  /** A call to the API with the token; a 401 (a token Google revoked early) renews it once. */
  async function api(path: string, init: RequestInit, what: string, query?: Record<string, string>) {
    const url = new URL(applicationPath + path, config.apiBase);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    for (let attempt = 0; ; attempt++) {
      const token = await accessToken();
      const response = await call(url, { ...init, headers: { authorization: `Bearer ${token}` } }, what);
      if (response.status === 401 && attempt === 0) {
        cached = undefined;
        continue;
      }
      if (!response.ok) throw await errorOf(response, what);
      return response;
    }
  }

  /**
   * encodeURIComponent leaves dots alone, and a `.` or `..` segment would move the URL elsewhere on
   * Google's host, with our token: such a value is refused before any request, as Google refuses a
   * malformed token (400: no such purchase).
   */
  const segment = (value: string) => {
    if (/^\.+$/.test(value)) throw new PlayApiError('a product id or token of dots only: not sent to Google', 400);
    return encodeURIComponent(value);
  };
  const tokenPath = (sku: string, purchaseToken: string) =>
    `/purchases/products/${segment(sku)}/tokens/${segment(purchaseToken)}`;

  return {
    /** `purchases.products.get`: the purchase as Google has it now. */
    async getProductPurchase(sku: string, purchaseToken: string): Promise<ProductPurchase> {
      const what = 'purchases.products.get';
      const response = await api(tokenPath(sku, purchaseToken), { method: 'GET' }, what);
      const purchase = readProductPurchase(await response.json().catch(() => undefined));
      // Google's own status: Google answered, so this is 502 store_error, not "unreachable".
      if (!purchase) throw new PlayApiError(`${what}: the answer is not a ProductPurchase`, response.status);
      return purchase;
    },

    /** `purchases.products.consume`: the purchase is used up (and acknowledged); the app may sell the product again. */
    async consumeProductPurchase(sku: string, purchaseToken: string): Promise<void> {
      const response = await api(
        `${tokenPath(sku, purchaseToken)}:consume`,
        { method: 'POST' },
        'purchases.products.consume',
      );
      await response.arrayBuffer();
    },

    /**
     * `voidedpurchases.list` of one-time products voided from `startTimeMs` to `endTimeMs`, every
     * page (at most 50 of 1,000).
     */
    async listVoidedPurchases(startTimeMs: number, endTimeMs: number): Promise<VoidedPurchase[]> {
      const what = 'voidedpurchases.list';
      const found: VoidedPurchase[] = [];
      let pageToken: string | undefined;
      for (let page = 0; page < MAX_VOIDED_PAGES; page++) {
        const response = await api('/purchases/voidedpurchases', { method: 'GET' }, what, {
          startTime: String(startTimeMs),
          endTime: String(endTimeMs),
          maxResults: '1000',
          type: '0',
          ...(pageToken ? { token: pageToken } : {}),
        });
        const body = (await response.json().catch(() => undefined)) as
          | { voidedPurchases?: unknown; tokenPagination?: { nextPageToken?: unknown } }
          | undefined;
        if (!body || (body.voidedPurchases !== undefined && !Array.isArray(body.voidedPurchases)))
          throw new PlayApiError(`${what}: the answer is not a VoidedPurchasesListResponse`, response.status);
        for (const item of (body.voidedPurchases as unknown[] | undefined) ?? []) {
          const voided = readVoidedPurchase(item);
          if (voided) found.push(voided);
        }
        const next = body.tokenPagination?.nextPageToken;
        if (typeof next !== 'string' || next === '') return found;
        pageToken = next;
      }
      throw new PlayApiError(`${what}: more than ${MAX_VOIDED_PAGES} pages`, 502);
    },
  };
}

export type PlayClient = ReturnType<typeof createPlayClient>;
