// What bench/scale.ts needs of a seeded database (its organisation, a key, the counts), kept as the
// database's own comment so that it lives and dies with the data.
import postgres from 'postgres';

export interface SeedRecord {
  databaseUrl: string;
  organisationId: string;
  key: string;
  counts: Record<string, number>;
}

const adminUrl = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function seedRecordOf(scale: number, historyDays: number): string {
  return `floorline_scale_${String(scale).replace('.', '_')}_${historyDays}d`;
}

export async function writeSeedRecord(database: string, record: SeedRecord): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  // COMMENT takes no parameters: the JSON is quoted as a literal.
  await admin.unsafe(`comment on database "${database}" is '${JSON.stringify(record).replaceAll("'", "''")}'`);
  await admin.end();
}

/** The record of a seeded database; null when the database or its record is missing (a load that did not finish writes none). */
export async function readSeedRecord(database: string): Promise<SeedRecord | null> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const [row] = await admin<
    { comment: string | null }[]
  >`select shobj_description(oid, 'pg_database') as comment from pg_database where datname = ${database}`;
  await admin.end();
  return row?.comment ? (JSON.parse(row.comment) as SeedRecord) : null;
}
