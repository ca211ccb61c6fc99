import { isIP } from 'node:net';

/**
 * What Express's `trust proxy` is given: false (X-Forwarded-For ignored), a number of hops, or the
 * addresses of the proxies. The right-most addresses of X-Forwarded-For are the ones the proxies
 * wrote; everything left of them the client may have written itself, so `true` (trust every hop,
 * i.e. believe the client) is never passed on: it means one hop, the usual single reverse proxy.
 */
export type TrustProxy = false | number | string[];

/** Express's names for address ranges. */
const namedRanges = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (namedRanges.has(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** TRUST_PROXY as written in the environment, or a message saying what is wrong with it. */
export function parseTrustProxy(value: string): TrustProxy | string {
  const text = value.trim().toLowerCase();
  if (['', 'false', 'no', '0'].includes(text)) return false;
  if (['true', 'yes'].includes(text)) return 1;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops <= 10 ? hops : 'must be at most 10 hops';
  }
  const entries = text.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !isAddressOrRange(e));
  if (bad.length)
    return `must be false, true (one hop), a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal; not ${bad.join(', ')}`;
  return entries;
}
