import { isIPv4, isIPv6 } from 'node:net';

export type AddressRefusal = 'invalid' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'shared' | 'multicast' | 'reserved';
export type AddressVerdict = { public: true } | { public: false; reason: AddressRefusal };

interface Range {
  bytes: number[];
  prefix: number;
  reason: AddressRefusal;
}

function range(bytes: number[], prefix: number, reason: AddressRefusal): Range {
  return { bytes, prefix, reason };
}

// IANA IPv4 special-purpose registry: everything here is not reachable as a public host.
const ipv4Ranges: Range[] = [
  range([0, 0, 0, 0], 8, 'unspecified'),
  range([10, 0, 0, 0], 8, 'private'),
  range([100, 64, 0, 0], 10, 'shared'), // CGNAT
  range([127, 0, 0, 0], 8, 'loopback'),
  range([169, 254, 0, 0], 16, 'link_local'),
  range([172, 16, 0, 0], 12, 'private'),
  range([192, 0, 0, 0], 24, 'reserved'),
  range([192, 0, 2, 0], 24, 'reserved'),
  range([192, 88, 99, 0], 24, 'reserved'),
  range([192, 168, 0, 0], 16, 'private'),
  range([198, 18, 0, 0], 15, 'reserved'),
  range([198, 51, 100, 0], 24, 'reserved'),
  range([203, 0, 113, 0], 24, 'reserved'),
  range([224, 0, 0, 0], 4, 'multicast'),
  range([240, 0, 0, 0], 4, 'reserved'), // includes 255.255.255.255
];

const ipv6Ranges: Range[] = [
  range([0x01, 0x00], 64, 'reserved'), // 100::/64 discard-only
  range([0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'private'), // 64:ff9b:1::/48 local-use NAT64
  range([0x20, 0x01, 0x00, 0x00], 23, 'reserved'), // 2001::/23 IETF protocol assignments (Teredo, benchmarking, ORCHID…)
  range([0x20, 0x01, 0x0d, 0xb8], 32, 'reserved'), // documentation
  range([0xfc], 7, 'private'), // unique local
  range([0xfe, 0x80], 10, 'link_local'),
  range([0xfe, 0xc0], 10, 'private'), // deprecated site-local
  range([0xff], 8, 'multicast'),
];

function matches(address: Uint8Array, r: Range): boolean {
  let bits = r.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[i] & mask) !== ((r.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

function parseIPv4(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** 16 bytes of a valid IPv6 literal (zone id stripped), with an embedded dotted quad if present. */
function parseIPv6(text: string): Uint8Array {
  const bare = text.split('%')[0];
  const [headText, tailText] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const groups = (part: string | undefined): number[] => {
    if (!part) return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a, b, c, d] = piece.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(headText);
  const tail = groups(tailText);
  const words = tailText === undefined ? head : [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

function checkIPv4Bytes(bytes: Uint8Array): AddressVerdict {
  for (const r of ipv4Ranges) if (matches(bytes, r)) return { public: false, reason: r.reason };
  return { public: true };
}

function checkIPv6Bytes(bytes: Uint8Array): AddressVerdict {
  const allZeroUpTo = (n: number) => bytes.subarray(0, n).every((b) => b === 0);
  if (allZeroUpTo(16)) return { public: false, reason: 'unspecified' };
  if (allZeroUpTo(15) && bytes[15] === 1) return { public: false, reason: 'loopback' };
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96): judged by the IPv4 address they carry.
  if (allZeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return checkIPv4Bytes(bytes.subarray(12));
  if (matches(bytes, range([0x00, 0x64, 0xff, 0x9b], 96, 'reserved'))) return checkIPv4Bytes(bytes.subarray(12));
  // 6to4 (2002::/16) carries an IPv4 address in bits 16..48.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return checkIPv4Bytes(bytes.subarray(2, 6));
  for (const r of ipv6Ranges) if (matches(bytes, r)) return { public: false, reason: r.reason };
  // Only 2000::/3 is allocated as global unicast; the rest (IPv4-compatible ::/96 included) is reserved.
  if ((bytes[0] & 0xe0) !== 0x20) return { public: false, reason: 'reserved' };
  return { public: true };
}

/**
 * Whether an IP literal is a public unicast address a webhook may be sent to (docs/webhooks.md):
 * loopback, private, link-local, CGNAT, multicast, reserved and unspecified addresses are refused,
 * also when written as IPv4-mapped IPv6.
 */
export function checkAddress(ip: string): AddressVerdict {
  if (isIPv4(ip)) return checkIPv4Bytes(parseIPv4(ip));
  if (isIPv6(ip)) return checkIPv6Bytes(parseIPv6(ip));
  return { public: false, reason: 'invalid' };
}
