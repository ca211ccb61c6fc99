import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

const docs = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks. */
function unfenced(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** The text outside code: fenced blocks dropped, inline code emptied. */
function prose(text: string): string {
  return unfenced(text).replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, each space a `-`, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of unfenced(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

describe('links between the docs', () => {
  it('every relative link of README.md, CONTRIBUTING.md, bench/README.md and docs/*.md reaches a file, and its anchor a heading', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const doc of docs) {
      const text = readFileSync(path.join(root, doc), 'utf8');
      for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.join(path.dirname(path.join(root, doc)), file) : path.join(root, doc);
        if (!existsSync(resolved)) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor))
          broken.push(`${doc}: ${target} (no such heading)`);
        if (path.relative(root, resolved).startsWith('..')) broken.push(`${doc}: ${target} (outside the repository)`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
