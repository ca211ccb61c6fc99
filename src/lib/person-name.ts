/**
 * A guest's name written in one field (waiting list, reservation imports) split into the guest's
 * firstName and lastName: the first word, then the rest. Blank → both null.
 */
export function splitPersonName(name: string | null | undefined): { firstName: string | null; lastName: string | null } {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { firstName: null, lastName: null };
  return { firstName: words[0], lastName: words.length > 1 ? words.slice(1).join(' ') : null };
}

function comparableName(name: string | null | undefined): string {
  return (name ?? '').normalize('NFKC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('en');
}

/**
 * Whether a name given with a phone is that guest's own (docs/security.md "Widget bookings"): first
 * and last name equal to the guest's, ignoring case and spacing, and the guest has a name at all (a
 * nameless guest cannot be claimed by giving no name).
 */
export function isSameGuestName(
  guest: { firstName: string | null; lastName: string | null },
  given: { firstName?: string | null; lastName?: string | null },
): boolean {
  const first = comparableName(guest.firstName);
  const last = comparableName(guest.lastName);
  if (!first && !last) return false;
  return first === comparableName(given.firstName) && last === comparableName(given.lastName);
}
