import { boolean, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';

export const organisations = pgTable('organisations', {
  id: idColumn(),
  name: text('name').notNull(),
  isTest: boolean('is_test').notNull().default(false),
  createdAt: createdAtColumn(),
  updatedAt: updatedAtColumn(),
});
