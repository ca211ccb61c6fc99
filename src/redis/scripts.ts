import { readFileSync } from 'node:fs';
import type { RedisClient } from './connections.js';

/**
 * The project's Lua scripts (src/redis/scripts/*.lua, as BullMQ keeps its own): each file opens with
 * a header naming its KEYS and ARGV, from which the number of keys is read, and may include a shared
 * snippet (`--- @include <name>`, from scripts/includes/). Every key a script touches is one of its
 * KEYS, so that a Redis Cluster can route it; the caller gives keys of one hash tag (key-layout.ts).
 */
const scriptsDir = new URL('./scripts/', import.meta.url);

/** A script's signature: its keys and its arguments, in header order, and what it returns. */
export interface RedisScript<Keys extends readonly string[], Args extends readonly (string | number)[], Result> {
  /** The file (without .lua) and the command's name on a connection. */
  readonly name: string;
  /** Types only: never set. */
  readonly signature?: (keys: Keys, args: Args) => Result;
}

function script<Keys extends readonly string[], Args extends readonly (string | number)[], Result>(
  name: string,
): RedisScript<Keys, Args, Result> {
  return { name };
}

export const scripts = {
  incrementRateWindow: script<readonly [window: string], readonly [ttlMs: number, hits: number], number>('increment-rate-window'),
  acquireDestinationSlot: script<
    readonly [slots: string, waiters: string],
    readonly [limit: number, leaseMs: number, token: string, jobId: string],
    readonly [taken: 0 | 1, waitersAhead?: number, waitersListed?: number]
  >('acquire-destination-slot'),
  releaseDestinationSlot: script<readonly [slots: string, waiters: string], readonly [token: string, wakes: number], string[]>(
    'release-destination-slot',
  ),
  renewDestinationSlot: script<readonly [slots: string], readonly [leaseMs: number, token: string], number>('renew-destination-slot'),
  takeFairTags: script<
    readonly [epoch: string, virtualTime: string, organisationTag: string],
    readonly [count: number, lifetimeSeconds: number],
    number
  >('take-fair-tags'),
  takePacedFairTags: script<
    readonly [epoch: string, virtualTime: string, organisationTag: string, recent: string, organisationPace: string, pacedUntil: string],
    readonly [count: number, lifetimeSeconds: number, organisationId: string, perSecond: number, burst: number, companyMs: number],
    readonly [number, number, number, number]
  >('take-paced-fair-tags'),
  advanceFairVirtualTime: script<readonly [virtualTime: string], readonly [priority: number, lifetimeSeconds: number], number>(
    'advance-fair-virtual-time',
  ),
  restartFairCount: script<readonly [pacedUntil: string, epoch: string, virtualTime: string], readonly [after: number], number>(
    'restart-fair-count',
  ),
} as const;

/** A script's text with its includes expanded and the number of KEYS its header declares. */
export interface LoadedScript {
  lua: string;
  numberOfKeys: number;
}

const includePattern = /^--- @include ([\w-]+)$/gm;

/** Reads and prepares one script (pure apart from reading the files; exported for the header test). */
export function loadScript(name: string): LoadedScript {
  const text = readFileSync(new URL(`${name}.lua`, scriptsDir), 'utf8');
  const header = /^--\[\[([\s\S]*?)\]\]/.exec(text)?.[1];
  if (header === undefined) throw new Error(`${name}.lua has no --[[ … ]] header declaring its KEYS and ARGV`);
  const declared = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((match) => Number(match[1]));
  if (declared.some((n, i) => n !== i + 1)) throw new Error(`${name}.lua declares KEYS out of order: ${declared.join(', ')}`);
  const lua = text.replace(includePattern, (_, include: string) =>
    readFileSync(new URL(`includes/${include}.lua`, scriptsDir), 'utf8').trimEnd(),
  );
  return { lua, numberOfKeys: declared.length };
}

const loaded = new Map<string, LoadedScript>();
const withScripts = new WeakSet<object>();

/**
 * Defines every script as a command of the connection (once per connection): ioredis then sends
 * EVALSHA and the text only when the server does not know it yet (after a restart or a failover).
 */
export function defineScripts(redis: RedisClient): void {
  if (withScripts.has(redis)) return;
  for (const { name } of Object.values(scripts)) {
    let prepared = loaded.get(name);
    if (!prepared) {
      prepared = loadScript(name);
      loaded.set(name, prepared);
    }
    redis.defineCommand(name, prepared);
  }
  withScripts.add(redis);
}

type ScriptCall = (...keysAndArgs: Array<string | number>) => unknown;

/** Runs a script on a connection (its scripts defined first). */
export function runScript<K extends readonly string[], A extends readonly (string | number)[], R>(
  redis: RedisClient,
  { name }: RedisScript<K, A, R>,
  keys: K,
  args: A,
): Promise<R> {
  defineScripts(redis);
  return (redis as unknown as Record<string, ScriptCall>)[name](...keys, ...args) as Promise<R>;
}
