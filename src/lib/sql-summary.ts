/** What a statement span says of its statement (docs/operations.md "Tracing"): its operation and the table it works on. */
export interface StatementSummary {
  /** The statement's first keyword in lower case (`select`, `insert`, `update`, `delete`, `with`, `begin`…); the operation of its write for a `with`. */
  operation: string;
  /** The table written (insert, update, delete), else the first one read (`from`); null when none is named. */
  table: string | null;
}

const identifier = String.raw`("[^"]+"|[a-z_][\w$]*)(?:\s*\.\s*("[^"]+"|[a-z_][\w$]*))?`;
// The name's parts are the last two groups of each pattern.
const writes = new RegExp(String.raw`\b(insert\s+into|update|delete\s+from)\s+${identifier}`, 'i');
const reads = new RegExp(String.raw`\b(from)\s+${identifier}`, 'gi');

const unquote = (name: string) => name.replace(/^"(.*)"$/, '$1');

/** The table a match names: the last part of a qualified name (`public.events`: events). */
function tableOf(match: RegExpMatchArray | null): string | null {
  if (!match) return null;
  return unquote(match[3] ?? match[2]);
}

/** How deep in parentheses `index` is in `text` (a subquery of the select list is read past). */
function depthAt(text: string, index: number): number {
  let depth = 0;
  for (let i = 0; i < index; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
  }
  return depth;
}

/** The first table a select reads at its own level (a subquery of its select list is read past), else the first one named. */
function readTable(text: string, topLevelOnly: boolean): string | null {
  const matches = [...text.matchAll(reads)];
  const level = /^\s*\(/.test(text) ? 1 : 0;
  return tableOf((topLevelOnly && matches.find((m) => depthAt(text, m.index) === level)) || matches[0] || null);
}

/** Reads the operation and table of a statement's text (its values are placeholders: nothing else is read). */
export function summariseStatement(text: string): StatementSummary {
  const first = /^\s*\(?\s*([a-z]+)/i.exec(text)?.[1]?.toLowerCase() ?? 'statement';
  if (first === 'select') return { operation: first, table: readTable(text, true) };
  const write = writes.exec(text);
  if (first === 'with' && write) return { operation: write[1].split(/\s+/)[0].toLowerCase(), table: tableOf(write) };
  if (first === 'insert' || first === 'update' || first === 'delete') return { operation: first, table: tableOf(write) };
  return { operation: first === 'with' ? 'select' : first, table: readTable(text, false) };
}
