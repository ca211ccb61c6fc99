import { eq } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { guests } from '../../db/schema/index.js';
import { guestJson } from './guest-json.js';

/** The guest's current state for a webhook (`{guest}`), also while in the trash; null once purged. */
export async function getGuestView(guestId: string): Promise<{ guest: ReturnType<typeof guestJson> } | null> {
  const [row] = await db().select().from(guests).where(eq(guests.id, guestId));
  return row ? { guest: guestJson(row) } : null;
}
