import { createPublicKey, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../app.js';
import { appAccountToken } from '../../plugins/app/app-store/rules.js';
import { type AppleCa, createAppleCa, signJws } from './apple-ca.js';

/**
 * The App Store in tests: a certificate authority of our own signs transactions and notifications
 * as Apple does, and a loopback stand-in of the App Store Server API (reached through
 * APPLE_API_BASE) serves the notification history and takes consumption information, checking
 * the ES256 bearer token Apple's client makes.
 */

export const BUNDLE_ID = 'com.example.packs';
export const APP_APPLE_ID = 1234567890;
const KEY_ID = 'TESTKEY123';
const ISSUER_ID = '57246542-96fe-1a63-e053-0824d011072a';

export interface HistoryItem {
  signedPayload: string;
  /** When Apple first tried to send it: the history is indexed by it. */
  at: number;
}

export interface AppleStandIn {
  ca: AppleCa;
  env: Record<string, string>;
  /** Notifications the history answers (add the ones the webhook "missed"). */
  history: HistoryItem[];
  /** Notifications per page of the history (Apple's: 20). */
  historyPageSize: number;
  /** Consumption information received, by transaction id. */
  consumption: Map<string, Record<string, unknown>>;
  /** Requests received, as "METHOD path". */
  requests: string[];
  /** The next `count` API calls answer `status` (500 by default; a 4xx is Apple refusing the request). */
  fail(count: number, status?: number): void;
  transaction(fields: Partial<TransactionFields> & { userId: string; productId: string }): string;
  notification(
    type: string,
    transactionJws: string | undefined,
    fields?: Record<string, unknown>,
  ): { uuid: string; jws: string };
  close(): Promise<void>;
}

export interface TransactionFields {
  transactionId: string;
  appAccountToken: string;
  environment: string;
  bundleId: string;
  type: string;
  price: number;
  currency: string;
  quantity: number;
  revocationDate: number;
}

let sequence = 2_000_000_000;
export const nextTransactionId = () => {
  sequence += 1;
  return String(sequence);
};

/** Starts the stand-in and makes a CA; `env` configures an app for both. */
export async function startAppleStandIn(): Promise<AppleStandIn> {
  const ca = createAppleCa();
  const dir = mkdtempSync(join(tmpdir(), 'apple-ca-'));
  const rootPath = join(dir, 'root.pem');
  writeFileSync(rootPath, ca.rootPem);
  const apiKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const apiPublic = createPublicKey(apiKey.privateKey);
  const history: HistoryItem[] = [];
  const consumption = new Map<string, Record<string, unknown>>();
  const requests: string[] = [];
  let failures = 0;
  let failureStatus = 500;

  /** Apple's client signs `{ iss, aud: appstoreconnect-v1, bid, iat, exp }` with the API key, kid in the header. */
  const authorized = (header: string | undefined): boolean => {
    const [head, body, signature] = (header ?? '').replace(/^Bearer /, '').split('.');
    if (!head || !body || !signature) return false;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const protectedHeader = JSON.parse(Buffer.from(head, 'base64url').toString());
    return (
      protectedHeader.alg === 'ES256' &&
      protectedHeader.kid === KEY_ID &&
      claims.iss === ISSUER_ID &&
      claims.aud === 'appstoreconnect-v1' &&
      claims.bid === BUNDLE_ID &&
      verify(
        'sha256',
        Buffer.from(`${head}.${body}`),
        { key: apiPublic, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      )
    );
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
      requests.push(`${request.method} ${path}`);
      const reply = (status: number, body?: object) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(body ? JSON.stringify(body) : undefined);
      };
      if (!authorized(request.headers.authorization))
        return reply(401, { errorCode: 4010000, errorMessage: 'unauthorized' });
      if (failures > 0) {
        failures -= 1;
        return reply(failureStatus, { errorCode: failureStatus * 10_000, errorMessage: 'stand-in failure' });
      }
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : {};
      if (request.method === 'POST' && path === '/inApps/v1/notifications/history') {
        const query = new URL(request.url ?? '/', 'http://stand-in').searchParams;
        const inWindow = history.filter((item) => item.at >= body.startDate && item.at < body.endDate);
        const offset = Number(query.get('paginationToken') ?? 0);
        const page = inWindow.slice(offset, offset + standIn.historyPageSize);
        const more = offset + standIn.historyPageSize < inWindow.length;
        return reply(200, {
          notificationHistory: page.map((item) => ({ signedPayload: item.signedPayload })),
          hasMore: more,
          ...(more ? { paginationToken: String(offset + standIn.historyPageSize) } : {}),
        });
      }
      const consumed = /^\/inApps\/v2\/transactions\/consumption\/(\w+)$/.exec(path);
      if (request.method === 'PUT' && consumed) {
        consumption.set(consumed[1] as string, body);
        return reply(202);
      }
      return reply(404, { errorCode: 4040000, errorMessage: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const standIn: AppleStandIn = {
    historyPageSize: 20,
    ca,
    history,
    consumption,
    requests,
    env: {
      APPLE_BUNDLE_ID: BUNDLE_ID,
      APPLE_APP_APPLE_ID: String(APP_APPLE_ID),
      APPLE_ENVIRONMENT: 'Production',
      APPLE_ROOT_CERTIFICATES: rootPath,
      APPLE_API_KEY_ID: KEY_ID,
      APPLE_API_ISSUER_ID: ISSUER_ID,
      APPLE_API_PRIVATE_KEY: apiKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      APPLE_API_BASE: url,
    },
    fail: (count, status = 500) => {
      failures = count;
      failureStatus = status;
    },
    transaction: ({ userId, productId, ...fields }) => {
      const now = Date.now();
      const id = fields.transactionId ?? nextTransactionId();
      return signJws(ca, {
        transactionId: id,
        originalTransactionId: id,
        bundleId: BUNDLE_ID,
        productId,
        purchaseDate: now,
        originalPurchaseDate: now,
        quantity: 1,
        type: 'Consumable',
        appAccountToken: appAccountToken(userId),
        inAppOwnershipType: 'PURCHASED',
        signedDate: now,
        environment: 'Production',
        transactionReason: 'PURCHASE',
        storefront: 'USA',
        storefrontId: '143441',
        price: 4990,
        currency: 'USD',
        ...fields,
      });
    },
    notification: (type, transactionJws, fields = {}) => {
      const uuid = randomUUID();
      const jws = signJws(ca, {
        notificationType: type,
        notificationUUID: uuid,
        version: '2.0',
        signedDate: Date.now(),
        data: {
          appAppleId: APP_APPLE_ID,
          bundleId: BUNDLE_ID,
          bundleVersion: '1.0',
          environment: 'Production',
          ...(transactionJws ? { signedTransactionInfo: transactionJws } : {}),
          ...(type === 'CONSUMPTION_REQUEST' ? { consumptionRequestReason: 'UNINTENDED_PURCHASE' } : {}),
        },
        ...fields,
      });
      return { uuid, jws };
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return standIn;
}

/** Posts a notification to the webhook as Apple does. */
export const deliverApple = (app: App, signedPayload: string) =>
  app.inject({
    method: 'POST',
    url: '/api/webhooks/apple',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ signedPayload }),
  });
