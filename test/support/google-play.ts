import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSigner, createVerifier } from 'fast-jwt';
import type { App } from '../../app.js';

/**
 * Local stand-ins for Google, on loopback, reached through the same variables production uses:
 * - the OAuth token endpoint (GOOGLE_OAUTH_TOKEN_URL), which checks the service account's RS256
 *   assertion with the account's public key and hands out access tokens;
 * - the Android Publisher v3 API (GOOGLE_PLAY_API_BASE): `purchases.products.get` and `:consume`
 *   and `voidedpurchases.list`, shaped as Google's reference defines them, refusing calls
 *   without a token it issued;
 * - Google's OIDC certificates (GOOGLE_OIDC_CERTS_URL), whose key signs Pub/Sub-shaped push tokens.
 */

export const PACKAGE_NAME = 'com.example.packs';
export const PUSH_AUDIENCE = 'https://packs.example.com/api/webhooks/google';
export const PUSH_SERVICE_ACCOUNT = 'rtdn-push@packs-project.iam.gserviceaccount.com';
const SERVICE_ACCOUNT_EMAIL = 'play-reader@packs-project.iam.gserviceaccount.com';

export interface StandInPurchase {
  sku: string;
  purchaseToken: string;
  orderId: string | null;
  /** 0 purchased, 1 canceled, 2 pending; null: left out of the answer (a malformed one). */
  purchaseState: number | null;
  consumptionState: number;
  acknowledgementState: number;
  purchaseTimeMillis: number;
  obfuscatedExternalAccountId: string | null;
  quantity: number;
}

export interface GooglePlayStandIn {
  url: string;
  env: Record<string, string>;
  purchases: Map<string, StandInPurchase>;
  /** Requests received, as "METHOD path" (tokens shortened to `{token}`). */
  requests: string[];
  /** Access tokens issued. */
  tokensIssued(): number;
  /** Google forgets every access token it issued (they answer 401 from now on). */
  revokeTokens(): void;
  /** A purchase made in the app; answers its token. */
  buy(sku: string, userId: string | null, fields?: Partial<StandInPurchase>): StandInPurchase;
  /** Google refunds or revokes a purchase: canceled, and listed as voided. */
  voidPurchase(purchaseToken: string, voidedAt?: number): void;
  /** The next `count` consumes answer 503. */
  failConsumes(count: number): void;
  /** The next `count` consumes are done, but the connection drops before the answer is read. */
  breakConsumes(count: number): void;
  /** Every connection is dropped at once, as if Google were unreachable (true), or answered again (false). */
  setDown(down: boolean): void;
  /** A Pub/Sub push token; `claims` override the defaults (undefined drops one); `key` forges the signature. */
  pushToken(claims?: Record<string, unknown>, options?: { key?: KeyObject; kid?: string }): string;
  close(): Promise<void>;
}

function rsaKeys() {
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

export async function startGooglePlayStandIn(): Promise<GooglePlayStandIn> {
  const account = rsaKeys();
  const oidc = rsaKeys();
  const oidcKid = `oidc-${randomBytes(4).toString('hex')}`;
  const accountKeyId = randomBytes(20).toString('hex');
  const checkAssertion = createVerifier({
    key: account.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    algorithms: ['RS256' as never],
    requiredClaims: ['iss', 'scope', 'aud', 'exp', 'iat'],
  });
  const purchases = new Map<string, StandInPurchase>();
  const voided: { purchaseToken: string; orderId: string | null; voidedTimeMillis: number }[] = [];
  const accessTokens = new Set<string>();
  let issued = 0;
  const requests: string[] = [];
  let failingConsumes = 0;
  let breakingConsumes = 0;
  let down = false;
  let url = '';

  const server: Server = createServer((request, response) => {
    if (down) {
      request.socket.destroy();
      return;
    }
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const address = new URL(request.url ?? '/', 'http://127.0.0.1');
      const path = address.pathname;
      requests.push(`${request.method} ${path.replace(/\/tokens\/[^/:]+/, '/tokens/{token}')}`);
      const send = (status: number, value: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(value));
      const googleError = (code: number, status: string, message: string, reason = 'invalid') =>
        send(code, { error: { code, message, status, errors: [{ message, domain: 'global', reason }] } });

      if (path === '/certs')
        return send(200, {
          keys: [{ ...oidc.publicKey.export({ format: 'jwk' }), kid: oidcKid, alg: 'RS256', use: 'sig' }],
        });
      if (request.method === 'POST' && path === '/token') {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
          return send(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
        try {
          const claims = checkAssertion(form.get('assertion') ?? '') as Record<string, unknown>;
          if (
            claims.iss !== SERVICE_ACCOUNT_EMAIL ||
            claims.aud !== `${url}/token` ||
            claims.scope !== 'https://www.googleapis.com/auth/androidpublisher'
          )
            throw new Error('wrong claims');
        } catch (error) {
          if (process.env.DEBUG_STAND_IN) console.error(error);
          return send(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
        }
        const token = `ya29.${randomBytes(16).toString('hex')}`;
        accessTokens.add(token);
        issued += 1;
        return send(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
      }
      const prefix = `/androidpublisher/v3/applications/${PACKAGE_NAME}/purchases`;
      if (!path.startsWith(prefix)) return googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (!bearer || !accessTokens.has(bearer))
        return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', 'authError');

      const product = /^\/products\/([^/]+)\/tokens\/([^/:]+)(:consume)?$/.exec(path.slice(prefix.length));
      if (product) {
        const [, sku, token, consume] = product.map((part) => (part ? decodeURIComponent(part) : part));
        const purchase = purchases.get(token as string);
        if (!purchase || purchase.sku !== sku)
          return googleError(400, 'INVALID_ARGUMENT', 'The purchase token does not match the product ID.', 'invalid');
        if (request.method === 'GET' && !consume)
          return send(200, {
            kind: 'androidpublisher#productPurchase',
            purchaseTimeMillis: String(purchase.purchaseTimeMillis),
            ...(purchase.purchaseState !== null ? { purchaseState: purchase.purchaseState } : {}),
            consumptionState: purchase.consumptionState,
            developerPayload: '',
            ...(purchase.orderId ? { orderId: purchase.orderId } : {}),
            acknowledgementState: purchase.acknowledgementState,
            productId: purchase.sku,
            regionCode: 'US',
            ...(purchase.quantity !== 1 ? { quantity: purchase.quantity } : {}),
            ...(purchase.obfuscatedExternalAccountId
              ? { obfuscatedExternalAccountId: purchase.obfuscatedExternalAccountId }
              : {}),
          });
        if (request.method === 'POST' && consume) {
          if (failingConsumes > 0) {
            failingConsumes -= 1;
            return googleError(503, 'UNAVAILABLE', 'The service is currently unavailable.', 'backendError');
          }
          if (purchase.purchaseState !== 0)
            return googleError(
              400,
              'FAILED_PRECONDITION',
              'The purchase is not in a valid state to perform the desired operation.',
            );
          if (purchase.consumptionState === 1)
            return googleError(
              400,
              'FAILED_PRECONDITION',
              'The product purchase is already consumed.',
              'productNotOwnedByUser',
            );
          Object.assign(purchase, { consumptionState: 1, acknowledgementState: 1 });
          if (breakingConsumes > 0) {
            breakingConsumes -= 1;
            response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
            return response.write('{', () => response.socket?.destroy());
          }
          return response.writeHead(200).end();
        }
      }
      if (request.method === 'GET' && path === `${prefix}/voidedpurchases`) {
        const start = Number(address.searchParams.get('startTime') ?? 0);
        const end = Number(address.searchParams.get('endTime') ?? Date.now());
        const offset = Number(address.searchParams.get('token') ?? 0);
        // Two a page, to exercise paging.
        const matching = voided.filter((item) => item.voidedTimeMillis >= start && item.voidedTimeMillis <= end);
        const page = matching.slice(offset, offset + 2);
        return send(200, {
          pageInfo: { totalResults: matching.length, resultPerPage: 2, startIndex: offset },
          ...(offset + 2 < matching.length ? { tokenPagination: { nextPageToken: String(offset + 2) } } : {}),
          voidedPurchases: page.map((item) => ({
            kind: 'androidpublisher#voidedPurchase',
            purchaseToken: item.purchaseToken,
            purchaseTimeMillis: String(purchases.get(item.purchaseToken)?.purchaseTimeMillis ?? 0),
            voidedTimeMillis: String(item.voidedTimeMillis),
            ...(item.orderId ? { orderId: item.orderId } : {}),
            voidedSource: 0,
            voidedReason: 7,
          })),
        });
      }
      return googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const serviceAccountKey = JSON.stringify({
    type: 'service_account',
    project_id: 'packs-project',
    private_key_id: accountKeyId,
    private_key: account.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: SERVICE_ACCOUNT_EMAIL,
    client_id: '100000000000000000000',
    token_uri: `${url}/token`,
  });

  const oidcPem = oidc.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    url,
    env: {
      GOOGLE_PLAY_PACKAGE_NAME: PACKAGE_NAME,
      GOOGLE_SERVICE_ACCOUNT_KEY: serviceAccountKey,
      GOOGLE_PLAY_API_BASE: url,
      GOOGLE_OAUTH_TOKEN_URL: `${url}/token`,
      GOOGLE_PUBSUB_AUDIENCE: PUSH_AUDIENCE,
      GOOGLE_PUBSUB_SERVICE_ACCOUNT: PUSH_SERVICE_ACCOUNT,
      GOOGLE_OIDC_CERTS_URL: `${url}/certs`,
    },
    purchases,
    requests,
    tokensIssued: () => issued,
    revokeTokens: () => accessTokens.clear(),
    buy(sku, userId, fields = {}) {
      const purchase: StandInPurchase = {
        sku,
        purchaseToken: `${randomBytes(12).toString('base64url')}.AO-J1O${randomBytes(24).toString('base64url')}`,
        orderId: `GPA.${[4, 4, 4, 5].map((n) => String(randomBytes(4).readUInt32BE()).padStart(n, '0').slice(0, n)).join('-')}`,
        purchaseState: 0,
        consumptionState: 0,
        acknowledgementState: 0,
        purchaseTimeMillis: Date.now(),
        obfuscatedExternalAccountId: userId,
        quantity: 1,
        ...fields,
      };
      purchases.set(purchase.purchaseToken, purchase);
      return purchase;
    },
    voidPurchase(purchaseToken, voidedAt = Date.now()) {
      const purchase = purchases.get(purchaseToken);
      if (!purchase) throw new Error('no such purchase');
      purchase.purchaseState = 1;
      voided.push({ purchaseToken, orderId: purchase.orderId, voidedTimeMillis: voidedAt });
    },
    failConsumes(count) {
      failingConsumes = count;
    },
    breakConsumes(count) {
      breakingConsumes = count;
    },
    setDown(value) {
      down = value;
    },
    pushToken(claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = {
        iss: 'https://accounts.google.com',
        aud: PUSH_AUDIENCE,
        azp: '100000000000000000001',
        sub: '100000000000000000001',
        email: PUSH_SERVICE_ACCOUNT,
        email_verified: true,
        iat: now,
        exp: now + 3600,
        ...claims,
      };
      for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
      const key = options.key ? options.key.export({ type: 'pkcs8', format: 'pem' }).toString() : oidcPem;
      return createSigner({ key, algorithm: 'RS256', kid: options.kid ?? oidcKid, noTimestamp: !('iat' in payload) })(
        payload,
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fresh RSA key, for forging push tokens. */
export const strangerKey = () => rsaKeys().privateKey;

/** A Pub/Sub push body around a DeveloperNotification; each gets a new message id unless given one. */
export function pushBody(
  notification: Record<string, unknown>,
  messageId = randomBytes(8).readBigUInt64BE().toString(),
): string {
  return JSON.stringify({
    message: {
      data: Buffer.from(
        JSON.stringify({
          version: '1.0',
          packageName: PACKAGE_NAME,
          eventTimeMillis: String(Date.now()),
          ...notification,
        }),
      ).toString('base64'),
      messageId,
      message_id: messageId,
      publishTime: new Date().toISOString(),
      attributes: {},
    },
    subscription: 'projects/packs-project/subscriptions/play-rtdn-push',
  });
}

export function push(app: App, body: string, token?: string) {
  return app.inject({
    method: 'POST',
    url: '/api/webhooks/google',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: body,
  });
}

/** What the app logs from now on, each call's arguments as JSON (the services hold the same logger). */
export function captureLogs(app: App): string[] {
  const lines: string[] = [];
  for (const level of ['info', 'warn', 'error'] as const) {
    const original = app.log[level].bind(app.log);
    app.log[level] = ((...args: Parameters<typeof original>) => {
      lines.push(JSON.stringify(args));
      return original(...args);
    }) as typeof original;
  }
  return lines;
}

export function creditGoogle(app: App, userToken: string, productId: string, purchaseToken: string) {
  return app.inject({
    method: 'POST',
    url: '/api/checkout/google',
    headers: { authorization: `Bearer ${userToken}` },
    payload: { productId, purchaseToken },
  });
}
