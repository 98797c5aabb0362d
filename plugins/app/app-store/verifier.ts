import { type KeyObject, verify, type X509Certificate } from 'node:crypto';
import {
  type Environment,
  type JWSTransactionDecodedPayload,
  type ResponseBodyV2DecodedPayload,
  SignedDataVerifier,
} from '@apple/app-store-server-library';
import type { Validator } from '@apple/app-store-server-library/dist/models/Validator.js';
import type { AppleConfig } from '../../../config/index.js';
import { AppError } from '../errors.js';

/** Chains verified at most: Apple signs with a handful of leaf certificates at a time. */
const MAX_CHAINS = 64;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

interface VerifiedChain {
  key: KeyObject;
  /** ES256 needs a P-256 leaf key (the library refuses any other curve): other chains always go to the library. */
  p256: boolean;
  /** The window every certificate of the chain is valid in. */
  notBefore: number;
  notAfter: number;
}

const validity = (certificate: X509Certificate) => ({
  notBefore: Date.parse(certificate.validFrom),
  notAfter: Date.parse(certificate.validTo),
});

/** A chain is known by its certificates' exact bytes, as the JWS header's `x5c` carries them (base64 DER). */
const chainKey = (leaf: string, intermediate: string) => `${leaf}/${intermediate}`;

/** Keeps at most MAX_CHAINS entries, forgetting the oldest. */
function remember(map: Map<string, VerifiedChain>, key: string, chain: VerifiedChain): void {
  if (map.size >= MAX_CHAINS) map.delete(map.keys().next().value as string);
  map.set(key, chain);
}

const decodeSegment = (segment: string): unknown => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

/**
 * Apple's SignedDataVerifier, remembering the certificate chains it has verified. With online
 * checks off, the library parses both certificates and verifies the whole chain (two signatures
 * and the marker extensions) on every call, then checks the JWS through a PEM export: ~0.7 ms of
 * CPU a call, which 50 purchases in flight on one event loop wait for one after another. A JWS
 * whose `x5c` names a chain the library already verified, byte for byte, is checked here
 * instead: the same payload validator, the signing date inside every certificate's validity, and
 * the ES256 signature with the leaf's key the library returned (~0.1 ms). Anything else, and
 * anything that does not pass here, goes to the library, which verifies it in full and words the
 * refusal; the bundle id, app id and environment are always checked by the library's callers.
 */
class RememberingVerifier extends SignedDataVerifier {
  private readonly chains = new Map<string, VerifiedChain>();
  private readonly headers = new Map<string, VerifiedChain>();

  protected override async verifyJWT<T>(
    jwt: string,
    validator: Validator<T>,
    signedDateExtractor: (decodedJWT: T) => Date,
  ): Promise<T> {
    const decoded = this.withKnownChain(jwt, validator, signedDateExtractor);
    return decoded === undefined ? super.verifyJWT(jwt, validator, signedDateExtractor) : decoded;
  }

  /** The payload when the JWS is signed by a remembered chain's leaf and valid; undefined otherwise. */
  private withKnownChain<T>(
    jwt: string,
    validator: Validator<T>,
    signedDateExtractor: (decodedJWT: T) => Date,
  ): T | undefined {
    const parts = jwt.split('.');
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts as [string, string, string];
    const chain = this.chainOfHeader(header);
    if (!chain || !BASE64URL.test(payload) || !BASE64URL.test(signature)) return undefined;
    let decoded: unknown;
    try {
      decoded = decodeSegment(payload);
    } catch {
      return undefined;
    }
    // Registered claims (exp, nbf) are the library's to check: Apple's payloads carry none.
    if (typeof decoded !== 'object' || decoded === null || 'exp' in decoded || 'nbf' in decoded) return undefined;
    if (!validator.validate(decoded)) return undefined;
    const at = signedDateExtractor(decoded as T).getTime();
    if (!(at >= chain.notBefore && at <= chain.notAfter)) return undefined;
    const signed = Buffer.from(`${header}.${payload}`);
    // Checked here, on the event loop: handing ~60 µs of work to libuv's pool measured slower (the
    // hop costs more than it frees on two cores), and the verification's p99 doubled.
    const valid = verify(
      'sha256',
      signed,
      { key: chain.key, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    );
    return valid ? (decoded as T) : undefined;
  }

  /**
   * The remembered chain an ES256 header names in its `x5c`. Apple sends the same header (the
   * same three certificates) with every JWS it signs with one key, so headers are remembered too:
   * the ~5 kB header is not decoded again.
   */
  private chainOfHeader(header: string): VerifiedChain | undefined {
    const remembered = this.headers.get(header);
    if (remembered) return remembered;
    if (!BASE64URL.test(header)) return undefined;
    let decoded: { alg?: unknown; x5c?: unknown };
    try {
      decoded = decodeSegment(header) as typeof decoded;
    } catch {
      return undefined;
    }
    const x5c = decoded?.x5c;
    if (decoded?.alg !== 'ES256' || !Array.isArray(x5c) || x5c.length !== 3) return undefined;
    const chain = this.chains.get(chainKey(String(x5c[0]), String(x5c[1])));
    if (!chain?.p256) return undefined;
    remember(this.headers, header, chain);
    return chain;
  }

  protected override async verifyCertificateChain(
    trustedRoots: X509Certificate[],
    leaf: X509Certificate,
    intermediate: X509Certificate,
    effectiveDate: Date,
  ): Promise<KeyObject> {
    const cacheKey = chainKey(leaf.raw.toString('base64'), intermediate.raw.toString('base64'));
    const at = effectiveDate.getTime();
    const known = this.chains.get(cacheKey);
    if (known && at >= known.notBefore && at <= known.notAfter) return known.key;
    const key = await super.verifyCertificateChain(trustedRoots, leaf, intermediate, effectiveDate);
    const root = trustedRoots.find((candidate) => candidate.subject === intermediate.issuer);
    const windows = [leaf, intermediate, ...(root ? [root] : [])].map(validity);
    remember(this.chains, cacheKey, {
      key,
      p256: key.asymmetricKeyDetails?.namedCurve === 'prime256v1',
      notBefore: Math.max(...windows.map((window) => window.notBefore)),
      notAfter: Math.min(...windows.map((window) => window.notAfter)),
    });
    return key;
  }
}

export interface AppleVerifier {
  /** A StoreKit transaction (from the app, or inside a notification): 400 `invalid_signed_data` when not Apple's for this app. */
  transaction(signed: string): Promise<JWSTransactionDecodedPayload>;
  /** An App Store Server Notification's signedPayload: 400 `invalid_signature` when not Apple's for this app. */
  notification(signed: string): Promise<ResponseBodyV2DecodedPayload>;
}

/**
 * Verification with Apple's library: the chain to the configured roots (with Apple's marker
 * extensions on the leaf and the intermediate), the signature, the bundle id, the app's Apple id
 * (production notifications) and the environment. Online (OCSP) checks are off: they would call
 * Apple's OCSP responder for every chain not yet seen, from inside a fan's request, and fail the
 * purchase whenever it is slow or unreachable; certificates are checked against the date Apple
 * signed the data instead, which is what Apple's library does offline.
 */
export function createAppleVerifier(config: AppleConfig): AppleVerifier {
  const verifier = new RememberingVerifier(
    config.rootCertificates,
    false,
    config.environment as Environment,
    config.bundleId,
    config.appAppleId,
  );
  const refused = (code: string, what: string) => (error: unknown) => {
    const status = (error as { status?: unknown }).status;
    throw new AppError(400, code, `${what} is not signed by Apple for this app (${String(status ?? 'unreadable')}).`);
  };
  return {
    transaction: (signed) =>
      verifier.verifyAndDecodeTransaction(signed).catch(refused('invalid_signed_data', 'The transaction')),
    notification: (signed) =>
      verifier.verifyAndDecodeNotification(signed).catch(refused('invalid_signature', 'The notification')),
  };
}
