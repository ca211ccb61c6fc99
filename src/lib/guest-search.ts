import { phoneDigits } from './phone.js';

export const searchLimits = { minLength: 3, maxLength: 200, maxWords: 8 } as const;

// A word made only of digits and phone punctuation is a piece of a phone number: it is matched
// by its digits, as the search text holds the number's digits without punctuation.
const phoneLikeWord = /^[0-9+()./-]*[0-9][0-9+()./-]*$/;

/** Escapes LIKE wildcards so that a word matches literally. */
function escapeLike(word: string): string {
  return word.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The words of a guest search, each ready for `search_text LIKE '%' || lower(unaccent(word)) || '%'`
 * (case and accents are folded in SQL, by the same function as the indexed text), or null when
 * the text breaks the limits of docs/api.md "Keys, limits": 3 to 200 characters, at most 8 words.
 */
export function parseGuestSearch(text: string): string[] | null {
  const trimmed = text.trim();
  if (trimmed.length < searchLimits.minLength || trimmed.length > searchLimits.maxLength) return null;
  const words = trimmed.split(/\s+/);
  if (words.length > searchLimits.maxWords) return null;
  return [...new Set(words.map((w) => escapeLike(phoneLikeWord.test(w) ? phoneDigits(w) : w)))];
}
