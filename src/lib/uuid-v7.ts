import { randomBytes } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one
 * after another land next to each other in a B-tree index, where random (version 4) ids touch a
 * random leaf page each: on a two-year history every insert then dirtied a page nobody had touched
 * since the last checkpoint, and PostgreSQL wrote that whole page to its WAL (about 8 KB per index
 * per row). The random part keeps ids unguessable; the creation time they reveal is in the
 * resources anyway. Within one millisecond the order is random, which an index does not mind.
 */
export function newId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
