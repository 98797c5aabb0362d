import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Which addresses an outbound webhook may reach. A team registers any URL it likes, and the service
 * then POSTs to it from inside our network: without this guard a URL (or a name whose DNS answer a
 * team controls) could reach loopback services, the private network or a cloud metadata endpoint.
 * Pure classification and resolution: nothing here connects anywhere.
 */

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

const ALLOWED: AddressVerdict = Object.freeze({ allowed: true });
const refused = (reason: string): AddressVerdict => ({ allowed: false, reason });

interface Range {
  bytes: number[];
  bits: number;
  reason: string;
}

function parseIPv4(text: string): number[] | null {
  return isIP(text) === 4 ? text.split('.').map(Number) : null;
}

/** The 16 bytes of an IPv6 address (zone already removed); null when it is not one. */
function parseIPv6(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let hex = text;
  // A trailing dotted IPv4 (::ffff:127.0.0.1) becomes its two 16-bit groups.
  const lastColon = hex.lastIndexOf(':');
  const embedded = parseIPv4(hex.slice(lastColon + 1));
  if (embedded) {
    const [a = 0, b = 0, c = 0, d = 0] = embedded;
    hex = `${hex.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left = '', right] = hex.split('::');
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const groups = right === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

function range(cidr: string, reason: string): Range {
  const [address = '', bits = ''] = cidr.split('/');
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (!bytes) throw new Error(`not a range: ${cidr}`);
  return { bytes, bits: Number(bits), reason };
}

function inRange(bytes: readonly number[], { bytes: prefix, bits }: Range): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const index = bit / 8;
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if (((bytes[index] ?? 0) & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

/** Most specific first: the first range that holds an address gives its reason. */
const bySpecificity = (ranges: Range[]) => ranges.sort((a, b) => b.bits - a.bits);

// The IPv4 ranges of IANA's special-purpose registry that are not globally reachable, plus the
// cloud metadata endpoints, each named so an endpoint's owner can see why a delivery was refused.
const IPV4_REFUSED = bySpecificity([
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'cgnat'),
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, DigitalOcean, OpenStack...
  range('168.63.129.16/32', 'metadata'), // Azure's platform endpoint: public, but answers only its own VMs
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  range('192.0.0.192/32', 'metadata'), // Oracle Cloud
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'reserved'), // the retired 6to4 relay anycast
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
  range('255.255.255.255/32', 'broadcast'),
]);

// IPv6 outside 2000::/3 (global unicast) is refused whatever it is; these name the usual ones, and
// refuse the parts of 2000::/3 that are not reachable hosts.
const IPV6_REFUSED = bySpecificity([
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'reserved'), // local-use NAT64: translates into the operator's own network
  range('100::/64', 'reserved'), // discard-only
  range('2001::/23', 'reserved'), // IETF protocol assignments: Teredo, benchmarking, ORCHID
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('fc00::/7', 'private'), // unique local addresses
  range('fd00:ec2::254/128', 'metadata'), // AWS's IPv6 metadata endpoint
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local'),
  range('ff00::/8', 'multicast'),
]);

// Prefixes that carry an IPv4 address inside: judged by that address. IPv4-mapped addresses reach
// the IPv4 address itself on a dual-stack socket; NAT64 and 6to4 reach it through a translator.
const IPV4_MAPPED = range('::ffff:0:0/96', 'ipv4-mapped');
const NAT64 = range('64:ff9b::/96', 'nat64');
const SIX_TO_FOUR = range('2002::/16', '6to4');

function classifyIPv4(bytes: readonly number[]): AddressVerdict {
  const match = IPV4_REFUSED.find((candidate) => inRange(bytes, candidate));
  return match ? refused(match.reason) : ALLOWED;
}

function embeddedVerdict(prefix: Range, ipv4: readonly number[]): AddressVerdict {
  const inner = classifyIPv4(ipv4);
  return inner.allowed ? ALLOWED : refused(`${prefix.reason} ${inner.reason}`);
}

function classifyIPv6(bytes: readonly number[]): AddressVerdict {
  if (inRange(bytes, IPV4_MAPPED)) return embeddedVerdict(IPV4_MAPPED, bytes.slice(12));
  if (inRange(bytes, NAT64)) return embeddedVerdict(NAT64, bytes.slice(12));
  if (inRange(bytes, SIX_TO_FOUR)) return embeddedVerdict(SIX_TO_FOUR, bytes.slice(2, 6));
  const match = IPV6_REFUSED.find((candidate) => inRange(bytes, candidate));
  if (match) return refused(match.reason);
  return ((bytes[0] ?? 0) & 0xe0) === 0x20 ? ALLOWED : refused('reserved');
}

/**
 * Whether an outbound webhook may connect to this address: a strict IPv4 dotted quad or an IPv6
 * address (with or without brackets or a zone). Anything else is refused as 'invalid'.
 */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const ipv4 = parseIPv4(bare);
  if (ipv4) return classifyIPv4(ipv4);
  const ipv6 = parseIPv6(bare);
  return ipv6 ? classifyIPv6(ipv6) : refused('invalid');
}

/**
 * The verdict on a URL's host when it is a literal address, for registration: null when the host
 * is a name (names are resolved and checked before each delivery). The WHATWG URL parser turns
 * the odd IPv4 spellings (http://2130706433/, http://0x7f.1/, http://127.1/) into dotted quads and
 * IPv6 into its short form, so what is judged here is what a connection would reach.
 */
export function literalHostVerdict(url: string): AddressVerdict | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refused('invalid url');
  }
  // Only http and https hosts are parsed as addresses; any other scheme is no webhook target.
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return refused('unsupported scheme');
  const host = parsed.hostname;
  if (host.startsWith('[') || isIP(host) === 4) return classifyAddress(host);
  return null;
}

/** A target the guard refused: nothing was connected to. `address` is the refused address. */
export class TargetRefusedError extends Error {
  readonly reason: string;
  readonly address?: string;

  constructor(reason: string, address?: string) {
    super(address ? `target refused: ${address} is ${reason}` : `target refused: ${reason}`);
    this.name = 'TargetRefusedError';
    this.reason = reason;
    this.address = address;
  }
}

/**
 * The system's resolver, as a connection would use it (getaddrinfo: /etc/hosts, then DNS), with
 * every answer in the order the system sorted them (usable families first).
 */
export const systemResolver: Resolver = async (host) => {
  const answers = await lookup(host, { all: true, order: 'verbatim' });
  return answers.map(({ address }) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
};

/**
 * Resolves a URL's host name (or takes its literal address) and checks EVERY address it answers:
 * one refused address refuses the target, so a name cannot mix a public address with a private one
 * and hope the connection picks the private one. Answers the address to connect to (the first),
 * which the caller pins the connection to, so a second resolution cannot swap it.
 * `allowPrivate` (development and tests only) lets every well-formed address through.
 */
export async function resolveTarget(
  host: string,
  options: { allowPrivate: boolean; resolve?: Resolver },
): Promise<ResolvedAddress> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(bare);
  const answers: ResolvedAddress[] =
    literal === 0 ? await (options.resolve ?? systemResolver)(bare) : [{ address: bare, family: literal as 4 | 6 }];
  const [first] = answers;
  if (!first) throw new Error(`${host} resolves to no address`);
  for (const { address } of answers) {
    const verdict = classifyAddress(address);
    if (!verdict.allowed && (verdict.reason === 'invalid' || !options.allowPrivate))
      throw new TargetRefusedError(verdict.reason, address);
  }
  return { address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}
