/**
 * Rows (or ids) per statement of a bulk write. PostgreSQL takes at most 65,535 parameters per
 * statement, and drizzle builds a statement's text recursively (one INSERT of 20,000 events overflowed
 * its stack), so a bulk write goes in statements of this many rows, inside the caller's transaction:
 * 500 rows of up to about 20 columns stay far below the parameter limit.
 */
export const bulkChunkSize = 500;

/**
 * Runs `work` on consecutive chunks of `items` (and the index of each chunk's first item), one after
 * the other, and concatenates what it returns.
 */
export async function mapInChunks<Item, Out>(
  items: readonly Item[],
  work: (chunk: Item[], start: number) => Promise<readonly Out[]>,
  size = bulkChunkSize,
): Promise<Out[]> {
  const out: Out[] = [];
  for (let start = 0; start < items.length; start += size) out.push(...(await work(items.slice(start, start + size), start)));
  return out;
}
