import type { Readable } from 'node:stream';

/** The JSON log lines a child process writes to `stream`, parsed as they arrive (other lines skipped). */
export function collectLogLines(stream: Readable): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return lines;
}
