import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { RedisClient } from '../../src/redis/connections.js';

/** One command the server received, as MONITOR reports it. */
export interface MonitoredCommand {
  /** `lua` for a command a script ran inside the server, else the client's address. */
  source: string;
  /** The command's name, lower case as sent. */
  name: string;
  /** The whole line (the command and its arguments, quoted), to search for a key. */
  line: string;
}

/**
 * Watches every command a Redis server receives (MONITOR) on a plain socket of its own: ioredis's
 * monitor connection throws from its socket when lines still arrive once it is being closed, which a
 * busy server always does. `stop` destroys the socket.
 */
export async function watchRedisCommands(url: string, onCommand: (command: MonitoredCommand) => void): Promise<{ stop: () => void }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port || 6379), hostname || '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  let pending = '';
  let started!: () => void;
  const monitoring = new Promise<void>((resolve) => (started = resolve));
  socket.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\r\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (line === '+OK') started();
      const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]*)"/.exec(line);
      if (match) onCommand({ source: match[1], name: match[2].toLowerCase(), line });
    }
  });
  socket.write('MONITOR\r\n');
  await monitoring;
  return { stop: () => socket.destroy() };
}

/**
 * The commands `connection` made Redis run while `work` ran that `keep` keeps (MONITOR on `url`).
 * MONITOR reports commands in the order the server ran them: once a marker echoed on the connection
 * after `work` is seen, every command `work` sent on it has been.
 */
export async function commandsSentDuring(
  url: string,
  connection: RedisClient,
  work: () => Promise<unknown>,
  keep: (command: MonitoredCommand) => boolean,
): Promise<MonitoredCommand[]> {
  const ownAddress = /addr=(\S+)/.exec(String(await connection.client('INFO')))?.[1];
  const marker = `end-of-work:${randomUUID()}`;
  const commands: MonitoredCommand[] = [];
  let markerSeen!: () => void;
  const seen = new Promise<void>((resolve) => (markerSeen = resolve));
  const watching = await watchRedisCommands(url, (command) => {
    if (command.line.includes(marker)) markerSeen();
    else if (command.source === ownAddress && keep(command)) commands.push(command);
  });
  try {
    await work();
    await connection.echo(marker);
    await seen;
  } finally {
    watching.stop();
  }
  return commands;
}
