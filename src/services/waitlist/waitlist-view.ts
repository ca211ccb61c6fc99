import { eq } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { waitlistEntries } from '../../db/schema/index.js';
import { waitlistEntryJson } from './waitlist-json.js';

/** The current entry in the v1 shape, as webhooks carry it (the subject's current state); null once gone. */
export async function getWaitlistEntryView(id: string): Promise<{ waitlistEntry: ReturnType<typeof waitlistEntryJson> } | null> {
  const [entry] = await db().select().from(waitlistEntries).where(eq(waitlistEntries.id, id));
  return entry ? { waitlistEntry: waitlistEntryJson(entry) } : null;
}
