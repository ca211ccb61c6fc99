// A stopping process's end of its pools while one of their connections is still being opened (for
// test/integration/close-database.test.ts): a query makes the pool open a connection to the database
// `argv[2]`, whose type lookup waits (the test holds a lock on that database's pg_type), then the
// pools are ended as run-roles.ts ends them. Prints "closed" and exits 0 when that end was clean, 1
// when it left an uncaught error.
import { createDatabase, useDatabase } from '../../src/db/client.js';
import { closeDatabase } from '../../src/db/close-database.js';

const database = createDatabase({ url: process.argv[2], pooler: 'none', poolSize: 1, statementTimeoutMs: 0 });
useDatabase(database);
const opening = database.sql`select 1`.catch((err: Error) => err);
await new Promise((resolve) => setTimeout(resolve, 500));
await closeDatabase(0.2);
console.log(`closed (the query: ${String(await opening)})`);
// A rejection left unhandled by the end is reported on the turns after it; then the exit, as
// run-roles.ts's caller exits (the ended connection's socket waits for the locked backend).
await new Promise((resolve) => setTimeout(resolve, 200));
process.exit(0);
