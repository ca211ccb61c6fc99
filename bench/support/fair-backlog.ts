// Emits an organisation's backlog through the outbox of the code under test (bench/fair-queues.ts):
// N reservation events in one transaction, enqueued after commit as that code enqueues them.
// Usage: node --import tsx bench/support/fair-backlog.ts <code dir> <organisationId> <venueId> <count>
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [codeDir, organisationId, venueId, count] = process.argv.slice(2);
const load = (file: string) => import(pathToFileURL(path.join(codeDir, file)).href);
const { transactionWithEvents, systemActor } = await load('src/services/events/outbox.ts');
const { closeQueues } = await load('src/queues/queues.ts');
const { sql } = await load('src/db/client.ts');

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
// The jobs are added after commit, in the background: wait for the queue to hold them.
await new Promise((resolve) => setTimeout(resolve, 3000));
await closeQueues();
await sql.end();
