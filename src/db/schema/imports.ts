import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';

export interface ImportRejection {
  /** Index of the row in the request's `rows` (0-based). */
  row: number;
  code: string;
  message: string;
  fields: string[];
}

/** A bulk import (guests or reservations): the request's rows are kept so that the worker can resume. */
export const imports = pgTable(
  'imports',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    apiKeyId: uuid('api_key_id')
      .notNull()
      .references(() => apiKeys.id),
    /** The venues the submitting key could see (null: all of the organisation); rows elsewhere are rejected. */
    venueIds: uuid('venue_ids').array(),
    kind: text('kind', { enum: ['guests', 'reservations'] }).notNull(),
    status: text('status', { enum: ['processing', 'completed', 'failed'] })
      .notNull()
      .default('processing'),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash').notNull(),
    rows: jsonb('rows').notNull().$type<unknown[]>(),
    totalRows: integer('total_rows').notNull(),
    /** Rows handled so far: the worker resumes from here after a crash. */
    processedRows: integer('processed_rows').notNull().default(0),
    createdRows: integer('created_rows').notNull().default(0),
    updatedRows: integer('updated_rows').notNull().default(0),
    rejectedRows: integer('rejected_rows').notNull().default(0),
    rejections: jsonb('rejections').notNull().default([]).$type<ImportRejection[]>(),
    createdAt: createdAtColumn(),
    completedAt: instant('completed_at'),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex('imports_key_idempotency_idx').on(t.apiKeyId, t.idempotencyKey),
    index('imports_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('imports_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
  ],
);
