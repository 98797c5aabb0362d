import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createSigner } from 'fast-jwt';
import type { MobileProvider } from '../schemas/enums.js';

/**
 * A local stand-in for Sign in with Apple and Google's ID tokens: a JWKS endpoint and an issuer on
 * loopback, and a way to mint ID tokens as the provider would. The service reaches it through the
 * same variables production uses (AUTH_<PROVIDER>_JWKS_URL, _ISSUER, _CLIENT_IDS). Tests and
 * benchmarks import it; `npm run stand-in-provider` runs it for trying sign-in by hand:
 *
 *   GET /.well-known/jwks.json            the provider's public keys
 *   GET /id-token?sub=alice&nonce=RAW     an ID token for `sub`, carrying the nonce as the real
 *                                         provider would (Apple: its SHA-256 hex; Google: raw)
 */

export interface StandInProvider {
  kind: MobileProvider;
  /** The `iss` of its tokens (its own URL). */
  issuer: string;
  jwksUrl: string;
  clientId: string;
  /** The environment variables that point the service at this stand-in. */
  env: Record<string, string>;
  /** Requests received, as "METHOD path". */
  requests: string[];
  /** An ID token as the provider signs it; `claims` override or (with undefined) drop the defaults. */
  mint(
    sub: string,
    rawNonce: string,
    claims?: Record<string, unknown>,
    options?: { kid?: string; key?: KeyObject },
  ): string;
  /** The signing key, for tests that forge tokens with it. */
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
  close(): Promise<void>;
}

export const nonceClaim = (kind: MobileProvider, rawNonce: string) =>
  kind === 'apple' ? createHash('sha256').update(rawNonce, 'utf8').digest('hex') : rawNonce;

export async function startStandInProvider(
  kind: MobileProvider,
  options: { port?: number; clientId?: string } = {},
): Promise<StandInProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `${kind}-${randomBytes(4).toString('hex')}`;
  const clientId =
    options.clientId ?? (kind === 'apple' ? 'com.example.packs' : 'packs-app.apps.googleusercontent.com');
  const requests: string[] = [];
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

  let issuer = '';
  const mint: StandInProvider['mint'] = (sub, rawNonce, claims = {}, signing = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = {
      iss: issuer,
      aud: clientId,
      sub,
      iat: now,
      exp: now + 600,
      nonce: nonceClaim(kind, rawNonce),
      email: `${sub}@example.com`,
      email_verified: kind === 'apple' ? 'true' : true,
      // Each token differs, as real ones do (the service uses every ID token once).
      jti: randomBytes(8).toString('hex'),
      ...claims,
    };
    for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
    const key = signing.key ? signing.key.export({ type: 'pkcs8', format: 'pem' }).toString() : privatePem;
    // fast-jwt keeps a given iat; without one (a test dropping it), it must not add its own.
    return createSigner({ key, algorithm: 'RS256', kid: signing.kid ?? kid, noTimestamp: !('iat' in payload) })(
      payload,
    );
  };

  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url?.split('?')[0]}`);
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/.well-known/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    } else if (url.pathname === '/id-token') {
      const sub = url.searchParams.get('sub');
      const nonce = url.searchParams.get('nonce');
      if (sub && nonce) response.writeHead(200, { 'content-type': 'text/plain' }).end(mint(sub, nonce));
      else
        response
          .writeHead(400, { 'content-type': 'text/plain' })
          .end('sub and nonce are both required: /id-token?sub=alice&nonce=<your raw nonce>\n');
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const prefix = `AUTH_${kind.toUpperCase()}`;
  const jwksUrl = `${issuer}/.well-known/jwks.json`;
  return {
    kind,
    issuer,
    jwksUrl,
    clientId,
    env: { [`${prefix}_JWKS_URL`]: jwksUrl, [`${prefix}_ISSUER`]: issuer, [`${prefix}_CLIENT_IDS`]: clientId },
    requests,
    mint,
    privateKey,
    publicKey,
    kid,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const usage = 'usage: npm run stand-in-provider [-- --apple-port 4001 --google-port 4002]';

/** The ports asked for on the command line, or the usage line to print instead. */
export function standInPorts(args: string[]): { apple: number; google: number } | { problem: string } {
  let values: { 'apple-port': string; 'google-port': string };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'apple-port': { type: 'string', default: '4001' },
        'google-port': { type: 'string', default: '4002' },
      },
    }));
  } catch (error) {
    return { problem: `${(error as Error).message}\n${usage}` };
  }
  const port = (text: string) => (/^\d{1,5}$/.test(text) && Number(text) <= 65_535 ? Number(text) : undefined);
  const apple = port(values['apple-port']);
  const google = port(values['google-port']);
  if (apple === undefined || google === undefined) return { problem: `a port is a number from 0 to 65535\n${usage}` };
  return { apple, google };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ports = standInPorts(process.argv.slice(2));
  if ('problem' in ports) {
    console.error(ports.problem);
    process.exit(2);
  }
  const apple = await startStandInProvider('apple', { port: ports.apple });
  const google = await startStandInProvider('google', { port: ports.google });
  console.log('Stand-in providers running. Start the service with:\n');
  console.log(
    Object.entries({ ...apple.env, ...google.env })
      .map(([name, value]) => `${name}=${value}`)
      .join(' \\\n'),
    'npm start\n',
  );
  console.log(`Mint an ID token:  curl '${google.issuer}/id-token?sub=alice&nonce=<your raw nonce>'`);
  const stop = () => Promise.all([apple.close(), google.close()]).then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
