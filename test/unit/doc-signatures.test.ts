import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Splits at the commas (or semicolons) outside brackets; an arrow's `>` is not a bracket. */
function splitTopLevel(text: string, separators = ','): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '=' && text[i + 1] === '>') {
      current += '=>';
      i++;
      continue;
    }
    if ('({[<'.includes(c)) depth++;
    else if (')}]>'.includes(c)) depth--;
    if (depth === 0 && separators.includes(c)) {
      parts.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** The text between the bracket at `open` and the one that closes it. */
function enclosed(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if ('({['.includes(text[i])) depth++;
    else if (')}]'.includes(text[i]) && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** A declared parameter: its name, and the fields it takes when it is an object (destructured, an inline type or an interface of the file). */
interface Parameter {
  name: string;
  fields: string[] | null;
}

const fieldNames = (body: string) =>
  splitTopLevel(body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, ''), ',;\n')
    .map((f) => /^(?:readonly\s+)?\.{0,3}([\w$]+)/.exec(f)?.[1])
    .filter((f): f is string => f !== undefined);

function parametersOf(source: string, list: string): Parameter[] {
  return splitTopLevel(list).map((raw) => {
    const param = raw.replace(/^(?:(?:private|public|protected|readonly)\s+)+/, '');
    if (param.startsWith('{')) return { name: '{}', fields: fieldNames(enclosed(param, 0)) };
    const [, name = param, type = ''] = /^([\w$]+)\??(?:\s*:\s*([^=]+))?/.exec(param) ?? [];
    const typeText = type.trim();
    if (typeText.startsWith('{')) return { name, fields: fieldNames(enclosed(typeText, 0)) };
    const named = /^([A-Z][\w$]*)$/.exec(typeText)?.[1];
    const declared = named ? new RegExp(`interface ${named}\\s*\\{`).exec(source) : null;
    return { name, fields: declared ? fieldNames(enclosed(source, declared.index + declared[0].length - 1)) : null };
  });
}

const sources = new Map(
  readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => [`src/${f.split(path.sep).join('/')}`, readFileSync(path.join(root, 'src', f), 'utf8')]),
);

/**
 * The declared parameters of `name` in src/: an exported function (or const arrow), `new Class`'s
 * constructor, `Class.member` or a member of a class named in the doc's section heading. Null when
 * src/ declares nothing of that name (a library's function, an option's callback).
 */
function declaredParameters(name: string, isNew: boolean, headingClasses: string[]): Parameter[] | null {
  const [owner, member] = name.includes('.') ? name.split('.') : [null, name];
  const patterns: Array<{ owner: string | null; pattern: RegExp }> = [];
  if (isNew) patterns.push({ owner: name, pattern: /\bconstructor\(/ });
  else if (owner) patterns.push({ owner, pattern: new RegExp(`^\\s+(?:static\\s+)?(?:async\\s+)?${member}\\(`, 'm') });
  else {
    patterns.push({
      owner: null,
      pattern: new RegExp(`export (?:async )?function ${member}(?:<[^(]*>)?\\(|export const ${member} =\\s*(?:async\\s*)?\\(`),
    });
    for (const cls of headingClasses)
      patterns.push({ owner: cls, pattern: new RegExp(`^\\s+(?:static\\s+)?(?:async\\s+)?${member}\\(`, 'm') });
  }
  for (const { owner: cls, pattern } of patterns) {
    for (const source of sources.values()) {
      let scope = source;
      if (cls) {
        const start = new RegExp(`export class ${cls}\\b[^{]*\\{`).exec(source);
        if (!start) continue;
        scope = enclosed(source, start.index + start[0].length - 1);
      }
      const found = pattern.exec(scope);
      if (found) return parametersOf(source, enclosed(scope, found.index + found[0].length - 1));
    }
  }
  return null;
}

/** A quoted call whose arguments are names or `{ names }`: how the docs quote a signature. */
const argument = String.raw`\s*(?:\{[^{}()]*\}|[\w$]+\??)\s*`;
const quotedSignature = new RegExp(String.raw`^(new\s+)?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)\(((?:${argument}(?:,${argument})*)?)\)$`);

/** Every quoted signature of `doc` that does not match its declaration in src/, with the reason. */
function mismatchedSignatures(doc: string): string[] {
  const found: string[] = [];
  let headingClasses: string[] = [];
  for (const line of doc.split('\n')) {
    if (line.startsWith('#')) headingClasses = [...line.matchAll(/`([A-Z][\w$]*)`/g)].map((m) => m[1]);
    for (const [, span] of line.matchAll(/`([^`]+)`/g)) {
      const quoted = quotedSignature.exec(span.trim());
      if (!quoted) continue;
      const [, isNew, name, args] = quoted;
      const declared = declaredParameters(name, Boolean(isNew), headingClasses);
      if (!declared) continue;
      const given = args.trim() ? splitTopLevel(args) : [];
      if (given.length > declared.length) found.push(`${span}: ${declared.length} parameter(s) declared`);
      given.forEach((arg, i) => {
        const param = declared[i];
        if (!param) return;
        if (arg.startsWith('{')) {
          const unknown = fieldNames(enclosed(arg, 0)).filter((f) => param.fields && !param.fields.includes(f));
          if (unknown.length) found.push(`${span}: ${unknown.join(', ')} not among ${param.fields!.join(', ')}`);
        } else if (arg.replace(/\?$/, '') !== param.name) found.push(`${span}: parameter ${i + 1} is ${param.name}`);
      });
    }
  }
  return found;
}

describe('signatures quoted in docs/', () => {
  const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const docs = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md'));

  it('quotes signatures the checker resolves in src/', () => {
    const resolved = [...doc.matchAll(/`(new DestinationSlots\([^`]*\)|checkWebhookTarget\([^`]*\))`/g)];
    expect(resolved.length).toBeGreaterThanOrEqual(2);
  });

  it('match their declarations: the parameter names in order, and the fields of an object parameter', () => {
    expect(docs.length).toBeGreaterThan(5);
    expect(
      docs.flatMap((file) => mismatchedSignatures(readFileSync(path.join(root, 'docs', file), 'utf8')).map((m) => `${file}: ${m}`)),
    ).toEqual([]);
  });
});

describe('the signature check itself', () => {
  it('reports a renamed parameter, an option that is gone and a parameter too many, and accepts the real ones', () => {
    const doc = [
      '#### The unit: `DestinationSlots`',
      '`new DestinationSlots({ redisUrl, prefix })` `acquire(origin)` `release(slot)` `close(now)`',
      '`checkWebhookTarget(url, field, allowPrivate)` `is()`',
    ].join('\n');
    expect(mismatchedSignatures(doc)).toEqual([
      'new DestinationSlots({ redisUrl, prefix }): redisUrl not among redis, prefix, limit, workerConcurrency, wake, leaseMs',
      'acquire(origin): parameter 1 is destination',
      'close(now): 0 parameter(s) declared',
    ]);
  });
});
