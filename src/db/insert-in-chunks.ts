/**
 * Rows per INSERT of a bulk write. PostgreSQL takes at most 65,535 parameters per statement and
 * drizzle builds a statement's text recursively (20,000 rows overflowed its stack), so a bulk write
 * goes in statements of this many rows, inside the caller's transaction. 500 rows of up to about 20
 * columns stay far below the parameter limit.
 */
export const insertChunkRows = 500;

/** Runs `insert` on consecutive chunks of `rows`, one after the other, and concatenates what they return. */
export async function insertInChunks<Row, Out>(rows: readonly Row[], insert: (chunk: Row[]) => Promise<Out[]>): Promise<Out[]> {
  const out: Out[] = [];
  for (let start = 0; start < rows.length; start += insertChunkRows) {
    out.push(...(await insert(rows.slice(start, start + insertChunkRows))));
  }
  return out;
}
