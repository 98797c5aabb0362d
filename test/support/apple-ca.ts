import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/**
 * A certificate authority of our own, made at test time with node:crypto: root → intermediate →
 * leaf, ECDSA P-256, with Apple's marker extensions (the leaf's 1.2.840.113635.100.6.11.1, the
 * intermediate's 1.2.840.113635.100.6.2.1), the shape Apple's library checks. The certificates are
 * DER written by hand below: Node parses X.509 but does not make it.
 */

const LEAF_MARKER = '1.2.840.113635.100.6.11.1';
const INTERMEDIATE_MARKER = '1.2.840.113635.100.6.2.1';
const ECDSA_SHA256 = '1.2.840.10045.4.3.2';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), length(content.length), content]);
const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, content: Buffer) => tlv(0xa0 + n, content);
const integer = (bytes: Buffer) =>
  tlv(0x02, (bytes[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
const octets = (content: Buffer) => tlv(0x04, content);
const bits = (content: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);
const NULL = Buffer.from([0x05, 0x00]);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift(0x80 | (value & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const name = (commonName: string) => seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName)))));
const extension = (id: string, value: Buffer, critical = false) =>
  seq(oid(id), ...(critical ? [TRUE] : []), octets(value));

export interface Issued {
  der: Buffer;
  key: KeyObject;
  subject: string;
}

export interface CertificateOptions {
  subject: string;
  issuer?: Issued;
  ca: boolean;
  marker?: string;
  notBefore?: Date;
  notAfter?: Date;
}

/** One certificate: self-signed without an issuer. */
export function issue(options: CertificateOptions): Issued {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer = options.issuer?.key ?? privateKey;
  const extensions = [
    extension('2.5.29.19', options.ca ? seq(TRUE) : seq(), true),
    ...(options.marker ? [extension(options.marker, NULL)] : []),
  ];
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(randomBytes(8)),
    seq(oid(ECDSA_SHA256)),
    name(options.issuer?.subject ?? options.subject),
    seq(
      time(options.notBefore ?? new Date(Date.now() - 86_400_000)),
      time(options.notAfter ?? new Date(Date.now() + 365 * 86_400_000)),
    ),
    name(options.subject),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, signer);
  return { der: seq(tbs, seq(oid(ECDSA_SHA256)), bits(signature)), key: privateKey, subject: options.subject };
}

export interface AppleCa {
  root: Issued;
  intermediate: Issued;
  leaf: Issued;
  /** The root as PEM, for APPLE_ROOT_CERTIFICATES. */
  rootPem: string;
}

/** A root, an intermediate and a leaf shaped like Apple's; `markers: false` leaves the marker extensions out. */
export function createAppleCa(label = 'Test', options: { markers?: boolean } = {}): AppleCa {
  const markers = options.markers ?? true;
  const root = issue({ subject: `${label} Root CA`, ca: true });
  const intermediate = issue({
    subject: `${label} Worldwide Developer Relations`,
    issuer: root,
    ca: true,
    ...(markers ? { marker: INTERMEDIATE_MARKER } : {}),
  });
  const leaf = issue({
    subject: `${label} Mac App Store and iTunes Store Receipt Signing`,
    issuer: intermediate,
    ca: false,
    ...(markers ? { marker: LEAF_MARKER } : {}),
  });
  const rootPem = `-----BEGIN CERTIFICATE-----\n${root.der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
  return { root, intermediate, leaf, rootPem };
}

const base64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/** An ES256 JWS signed by the CA's leaf, its chain in `x5c`, as Apple signs transactions and notifications. */
export function signJws(ca: AppleCa, payload: object): string {
  const header = {
    alg: 'ES256',
    x5c: [ca.leaf.der, ca.intermediate.der, ca.root.der].map((der) => der.toString('base64')),
  };
  const data = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(data), { key: ca.leaf.key, dsaEncoding: 'ieee-p1363' });
  return `${data}.${signature.toString('base64url')}`;
}

/** The public key of a certificate's key pair (for checks in tests). */
export const publicKeyOf = (issued: Issued) => createPublicKey(issued.key);
