/** Words of the examples people copy: a secret containing one was written by hand, not generated. */
const placeholderWords = ['change', 'replace', 'placeholder', 'example', 'secret', 'password', 'default', 'your', 'xxxx', 'todo'];

/**
 * True for a secret that is someone's placeholder rather than random bytes: an example word, or
 * too few distinct characters (`aaaa…`, `0123…0123`).
 */
export function isPlaceholderSecret(secret: string): boolean {
  const lower = secret.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (placeholderWords.some((w) => lower.includes(w))) return true;
  return new Set(secret).size < 10;
}
