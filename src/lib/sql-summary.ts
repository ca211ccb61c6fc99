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

/**
 * PostgreSQL's keywords that are not plain names (reserved, and those that cannot be a function's or
 * a type's name), of PostgreSQL 15 to 17: a name spelled like one keeps its quotes.
 */
const keywords = new Set(
  `all analyse analyze and any array as asc asymmetric authorization between bigint binary bit boolean both case cast char character
check coalesce collate collation column concurrently constraint create cross current_catalog current_date current_role
current_schema current_time current_timestamp current_user dec decimal default deferrable desc distinct do else end except exists
extract false fetch float for foreign freeze from full grant greatest group grouping having ilike in initially inner inout int
integer intersect interval into is isnull join json json_array json_arrayagg json_exists json_object json_objectagg json_query
json_scalar json_serialize json_table json_value lateral leading least left like limit localtime localtimestamp merge_action
national natural nchar none normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay placing
position precision primary real references returning right row select session_user setof similar smallint some substring
symmetric system_user table tablesample then time timestamp to trailing treat trim true union unique user using values varchar
variadic verbose when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi
xmlroot xmlserialize xmltable`.split(/\s+/),
);

const plainName = /^[a-z_][a-z0-9_]*$/;
const nameCharacter = /[\w$]/;

/**
 * The statement as its span shows it: the same statement, in fewer characters. Quotes go from the
 * names PostgreSQL reads the same without them (lower case, not a keyword: `"reservations"."id"` is
 * `reservations.id`) and each run of white space becomes one space; string literals are kept as they
 * are. A statement with a comment or a dollar-quoted string is returned unchanged. Drizzle quotes
 * every name and qualifies every column: its statements lose about an eighth, and the exporter
 * encodes every span's text again.
 */
export function compactStatement(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === "'") {
      // A string literal, `''` inside it; an E'…' literal's backslash escapes the next character.
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !nameCharacter.test(text[i - 2] ?? ' ');
      let end = i + 1;
      while (end < n) {
        if (escapes && text[end] === '\\') end += 2;
        else if (text[end] === "'" && text[end + 1] === "'") end += 2;
        else if (text[end] === "'") break;
        else end++;
      }
      out += text.slice(i, end + 1);
      i = end + 1;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      // Unterminated, or a name with a quote in it (`""`): left as it is.
      if (end < 0 || text[end + 1] === '"') return text;
      const name = text.slice(i + 1, end);
      const bare =
        plainName.test(name) && !keywords.has(name) && !nameCharacter.test(text[i - 1] ?? ' ') && !nameCharacter.test(text[end + 1] ?? ' ');
      out += bare ? name : text.slice(i, end + 1);
      i = end + 1;
    } else if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*') || (c === '$' && !/\d/.test(text[i + 1] ?? ''))) {
      return text;
    } else if (/\s/.test(c)) {
      while (i < n && /\s/.test(text[i])) i++;
      if (out && i < n) out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
