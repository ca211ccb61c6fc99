import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The tree of an earlier commit (git archive) in a temporary directory, with this tree's
 * node_modules, so that a benchmark can serve it side by side with this one against the same
 * database (its schema must be the same). `remove` deletes the directory.
 */
export function extractCommit(rev: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'floorline-commit-'));
  execFileSync('sh', ['-c', 'git archive "$1" | tar -x -C "$2"', 'extract', rev, dir]);
  symlinkSync(realpathSync('node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
