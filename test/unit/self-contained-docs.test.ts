import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// The repository stands alone: its docs, comments and the served OpenAPI text state the contract
// themselves and cite the repository's own docs, never documents a reader of the repository lacks.
const foreign = [/interface\.md/, /decisions\.md/, /decisions §/, /\.\.\/shared\b/];

describe('self-contained repository', () => {
  it('refers to no document outside the repository', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.startsWith('drizzle/meta/') && f !== 'package-lock.json');
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      if (file === 'test/unit/self-contained-docs.test.ts') continue;
      let text: string;
      try {
        text = readFileSync(path.join(root, file), 'utf8');
      } catch {
        continue; // listed but deleted in the working tree
      }
      for (const pattern of foreign) if (pattern.test(text)) found.push(`${file}: ${pattern.source}`);
    }
    expect(found).toEqual([]);
  });
});
