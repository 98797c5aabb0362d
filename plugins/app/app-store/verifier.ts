import type { KeyObject, X509Certificate } from 'node:crypto';
import {
  type Environment,
  type JWSTransactionDecodedPayload,
  type ResponseBodyV2DecodedPayload,
  SignedDataVerifier,
} from '@apple/app-store-server-library';
import type { AppleConfig } from '../../../config/index.js';
import { AppError } from '../errors.js';

/** Chains verified at most: Apple signs with a handful of leaf certificates at a time. */
const MAX_CHAINS = 64;

interface VerifiedChain {
  key: KeyObject;
  /** The window every certificate of the chain is valid in. */
  notBefore: number;
  notAfter: number;
}

const validity = (certificate: X509Certificate) => ({
  notBefore: Date.parse(certificate.validFrom),
  notAfter: Date.parse(certificate.validTo),
});

/**
 * Apple's SignedDataVerifier, remembering the certificate chains it has verified. With online
 * checks off the library verifies the whole chain (two signatures and the marker extensions) on
 * every call; a chain already verified is answered from memory, as long as the date the data was
 * signed falls inside every certificate's validity. The JWS's own signature is still checked on
 * every call, by the library.
 */
class RememberingVerifier extends SignedDataVerifier {
  private readonly chains = new Map<string, VerifiedChain>();

  protected override async verifyCertificateChain(
    trustedRoots: X509Certificate[],
    leaf: X509Certificate,
    intermediate: X509Certificate,
    effectiveDate: Date,
  ): Promise<KeyObject> {
    const cacheKey = `${leaf.fingerprint256}/${intermediate.fingerprint256}`;
    const at = effectiveDate.getTime();
    const known = this.chains.get(cacheKey);
    if (known && at >= known.notBefore && at <= known.notAfter) return known.key;
    const key = await super.verifyCertificateChain(trustedRoots, leaf, intermediate, effectiveDate);
    const root = trustedRoots.find((candidate) => candidate.subject === intermediate.issuer);
    const windows = [leaf, intermediate, ...(root ? [root] : [])].map(validity);
    if (this.chains.size >= MAX_CHAINS) this.chains.delete(this.chains.keys().next().value as string);
    this.chains.set(cacheKey, {
      key,
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
