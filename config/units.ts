import { isIP } from 'node:net';
import { ConfigError } from './errors.js';

/** The unit parsers: durations, sizes, lists and the proxies to trust, as the variables give them. */

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** "30 seconds", "15m", "1 hour" or a bare number of milliseconds; zero only where it means "off". */
export function parseDuration(variable: string, value: string, options: { allowZero?: boolean } = {}): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = DURATION_UNITS[(match?.[2] || 'ms').toLowerCase()];
  if (!match || unit === undefined) {
    throw new ConfigError(
      variable,
      `must be a duration such as "30 seconds", "15 minutes" or "500 ms" (got "${value}")`,
    );
  }
  const milliseconds = Math.round(Number(match[1]) * unit);
  if (milliseconds === 0 && !options.allowZero) throw new ConfigError(variable, 'must be longer than zero');
  return milliseconds;
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** "1 MiB", "512 KB" or a bare number of bytes. */
export function parseSize(variable: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = SIZE_UNITS[(match?.[2] || 'b').toLowerCase()];
  if (!match || unit === undefined || Number(match[1]) <= 0) {
    throw new ConfigError(variable, `must be a size such as "1 MiB" or "512 KB" (got "${value}")`);
  }
  return Math.round(Number(match[1]) * unit);
}

/** `false`, a hop count, or comma-separated proxy addresses. `true` would trust any client's headers. */
export function parseTrustProxy(value: string): boolean | number | string[] {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true') {
    throw new ConfigError(
      'TRUST_PROXY',
      'must not be "true": any client could then choose its own IP address; give a hop count or the proxy addresses',
    );
  }
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const addresses = splitList(trimmed);
  for (const address of addresses) {
    const [ip, prefix, extra] = address.split('/');
    // A /0 range would trust every address, which is TRUST_PROXY=true by another name.
    const validPrefix =
      prefix === undefined ||
      (/^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (isIP(ip ?? '') === 6 ? 128 : 32));
    if (!PROXY_NAMES.has(address) && (extra !== undefined || isIP(ip ?? '') === 0 || !validPrefix)) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, a hop count, or comma-separated IP addresses or CIDR ranges (got "${address}")`,
      );
    }
  }
  return addresses;
}

/** Names proxy-addr understands for common private ranges. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
