// Emits an organisation's backlog through the outbox of the code under test (bench/fair-queues.ts):
// N reservation events in one transaction, enqueued after commit as that code enqueues them.
// Usage: node --import tsx bench/support/fair-backlog.ts <code dir> <organisationId> <venueId> <count>
// It loads the code and connects first, prints "ready", and emits when it reads a line on stdin: the
// backlog arises in a process already running, as it would in a server, and starting this one (tsx
// compiling the code) is not measured as part of it.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [codeDir, organisationId, venueId, count] = process.argv.slice(2);
const load = (file: string) => import(pathToFileURL(path.join(codeDir, file)).href);
// settleEnqueuedEvents is absent from older code (--code): the time to add the jobs is then not told apart.
// The environment made the process's configuration, as an entry point does (older code, --code, parses it on first use).
const { parseConfig, useProcessConfig } = await load('src/config.ts');
useProcessConfig?.(parseConfig(process.env));
const { transactionWithEvents, systemActor, settleEnqueuedEvents } = await load('src/services/outbox/outbox.ts');
const { closeQueues } = await load('src/queues/queues.ts');
const client = await load('src/db/client.ts');
// The pool is pool() since modules do nothing at import; older code (--code) exports it as `sql`.
const sql = client.pool ? client.pool() : client.sql;

await sql`select 1`;
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();

const emittedAt = Date.now();
const startsAt = new Date(Date.now() + 3 * 864e5);
await transactionWithEvents(systemActor('fair-queues bench'), async (_tx: unknown, emit: (event: Record<string, unknown>) => void) => {
  for (let i = 0; i < Number(count); i++) {
    const id = randomUUID();
    emit({
      organisationId,
      venueId,
      livemode: true,
      type: 'reservation_created',
      subjectType: 'reservation',
      subjectId: id,
      data: { reservation: { id, venueId, partySize: 2, status: 'created', startsAt: startsAt.toISOString(), source: 'api' } },
    });
  }
});
const committedAt = Date.now();
await settleEnqueuedEvents?.();
process.stderr.write(
  `A's backlog: committed ${committedAt - emittedAt} ms after it was asked for, its jobs added ${Date.now() - committedAt} ms after that\n`,
);
// The jobs are added after commit, in the background: this process stays (as a server would) until
// worker-events has processed every event, so that no job is left unsent when it closes.
while ((await sql`select 1 from events where organisation_id = ${organisationId} and dispatched_at is null limit 1`).length) {
  await new Promise((resolve) => setTimeout(resolve, 500));
}
await closeQueues();
await sql.end();
