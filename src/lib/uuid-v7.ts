import { randomFillSync } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one
 * after another land next to each other in a B-tree index, where random (version 4) ids touch a
 * random leaf page each: on a two-year history every insert then dirtied a page nobody had touched
 * since the last checkpoint, and PostgreSQL wrote that whole page to its WAL (about 8 KB per index
 * per row). The random part keeps ids unguessable; the creation time they reveal is in the
 * resources anyway. Within one millisecond the order is random, which an index does not mind.
 */
export function newId(now: number = Date.now()): string {
  const bytes = takeRandomBytes();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Random bytes are drawn for 256 ids at a time, as crypto.randomUUID does: one call to the system's
// random source per id cost about 75 µs of CPU per booking (docs/architecture.md "Write path").
const randomPool = Buffer.alloc(16 * 256);
let poolOffset = randomPool.length;

function takeRandomBytes(): Buffer {
  if (poolOffset === randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  randomPool.copy(bytes, 0, poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}
