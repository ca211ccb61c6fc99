/**
 * A guest's name written in one field (waiting list, reservation imports) split into the guest's
 * firstName and lastName: the first word, then the rest. Blank → both null.
 */
export function splitPersonName(name: string | null | undefined): { firstName: string | null; lastName: string | null } {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { firstName: null, lastName: null };
  return { firstName: words[0], lastName: words.length > 1 ? words.slice(1).join(' ') : null };
}
