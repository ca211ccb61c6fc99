import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { flatStatement } from '../../src/db/client.js';

const dialect = new PgDialect();
const nested = sql`select ${sql`coalesce((select version from reservation_versions where venue_id = ${sql.placeholder('venueId')}), 0)`} as v
  from venues where id = ${sql.placeholder('venueId')} and organisation_id = ${sql.placeholder('organisationId')} and ${sql`x = ${sql.placeholder('x')}`}`;

describe('flatStatement', () => {
  it('renders the same text and the same placeholders, in order, as the statement it flattens', () => {
    const flat = dialect.sqlToQuery(flatStatement(nested));
    const original = dialect.sqlToQuery(nested);
    expect(flat.sql).toBe(original.sql);
    expect(flat.params).toEqual(original.params);
    expect(flat.sql).toContain('$4');
  });

  it('is one level of pieces and placeholders: no nested fragment left to walk', () => {
    const chunks = flatStatement(nested).queryChunks;
    expect(chunks).toHaveLength(9);
  });

  it('refuses a statement with a value in it: a flat statement is built once, its values come at each call', () => {
    expect(() => flatStatement(sql`select ${'a value'} where id = ${sql.placeholder('id')}`)).toThrow(/not the next placeholder/);
  });
});
