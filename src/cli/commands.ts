import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Config } from '../config.js';
import { pool } from '../db/client.js';
import { isKnownCountry, isValidTimeZone } from '../lib/zones.js';
import type { DemoResult } from './demo.js';

const usage = `Usage: npm run cli -- <command> [options] [--json]

  migrate                                   apply pending database migrations
  org:create --name N [--test]              create an organisation (--test: a test organisation)
  venue:create --org ID --name N --timezone Z --country CC
  key:create --org ID --kind live|test|publishable [--scopes a,b] [--venues id,id]
             [--origins https://a,https://b] [--name N] [--rate-limit PER_MINUTE]
                                            create an API key; it is printed once
  key:revoke --id ID                        revoke a key (effective everywhere within 5 s)
  key:list --org ID                         list the keys of an organisation (never the keys themselves)
  demo                                      an organisation with a configured venue and one key of each kind
  check [--venues id,id] [--queue-prefixes p,q]
                                            count violations of the database invariants (exit code 2 when any);
                                            delivery jobs are looked up under QUEUE_PREFIX or these prefixes`;

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

class UsageError extends Error {}

function parseRateLimit(value: string | undefined): number | null {
  if (value === undefined) return null;
  const parsed = z.coerce.number().int().min(1).max(1_000_000).safeParse(value);
  if (!parsed.success) throw new UsageError('--rate-limit must be a whole number of requests per minute, 1 to 1000000');
  return parsed.data;
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || !v) throw new UsageError(`--${name} is required`);
  return v;
}

const uuid = z.uuid();

function requiredId(values: Record<string, unknown>, name: string): string {
  const v = required(values, name);
  if (!uuid.safeParse(v).success) throw new UsageError(`--${name} must be a UUID`);
  return v;
}

function idList(value: string | undefined): string[] | undefined {
  const ids = list(value);
  if (ids?.some((id) => !uuid.safeParse(id).success)) throw new UsageError('--venues must be UUIDs separated by commas');
  return ids;
}

/** Browsers send Origin as exactly scheme://host[:port]; anything else could never match. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

function originList(value: string | undefined): string[] | undefined {
  const origins = list(value);
  const bad = origins?.filter((o) => !isOrigin(o)) ?? [];
  if (bad.length)
    throw new UsageError(`--origins must be scheme://host[:port] without a path, e.g. https://shop.example (got ${bad.join(', ')})`);
  return origins;
}

/** What a command prints (human or `--json`) and its exit code. */
interface Outcome {
  human: string;
  json: unknown;
  exitCode?: number;
}

/**
 * The command named on the command line, its options checked, as the function that runs it: the
 * modules a command needs (database, queues, services) are loaded only then, so that a usage error is
 * answered without loading the application.
 */
function commandOf(
  config: Config,
  command: string | undefined,
  values: Record<string, string | boolean | undefined>,
): () => Promise<Outcome> {
  switch (command) {
    case 'migrate':
      return async () => {
        const { runMigrations } = await import('../db/migrate.js');
        await runMigrations(config.DATABASE_DIRECT_URL ?? config.DATABASE_URL);
        return { human: 'migrations applied', json: { migrated: true } };
      };
    case 'org:create': {
      const name = required(values, 'name');
      return async () => {
        const { createOrganisation } = await import('../services/keys/key-service.js');
        const org = await createOrganisation(name, values.test === true);
        return {
          human: `organisation ${org.id} (${org.isTest ? 'test' : 'live'})`,
          json: { id: org.id, name: org.name, livemode: !org.isTest },
        };
      };
    }
    case 'venue:create': {
      const timezone = required(values, 'timezone');
      const country = required(values, 'country').toUpperCase();
      if (!isValidTimeZone(timezone)) throw new UsageError(`unknown time zone ${timezone}`);
      if (!isKnownCountry(country)) throw new UsageError(`unknown country ${country}`);
      const organisationId = requiredId(values, 'org');
      const name = required(values, 'name');
      return async () => {
        const [{ createVenue }, { venueJson }] = await Promise.all([
          import('../services/venues/venue-service.js'),
          import('../services/venues/venue-json.js'),
        ]);
        const venue = await createVenue(organisationId, { name, timezone, countryCode: country });
        return { human: `venue ${venue.id}`, json: venueJson(venue) };
      };
    }
    case 'key:create': {
      const kind = z.enum(['live', 'test', 'publishable']).safeParse(required(values, 'kind'));
      if (!kind.success) throw new UsageError('--kind must be live, test or publishable');
      const input = {
        organisationId: requiredId(values, 'org'),
        kind: kind.data,
        name: typeof values.name === 'string' ? values.name : `${kind.data} key`,
        scopes: list(values.scopes as string | undefined),
        venueIds: idList(values.venues as string | undefined) ?? null,
        allowedOrigins: originList(values.origins as string | undefined),
        rateLimitPerMinute: parseRateLimit(values['rate-limit'] as string | undefined),
      };
      return async () => {
        const { createApiKey } = await import('../services/keys/key-service.js');
        const created = await createApiKey(input);
        return { human: `key ${created.id}\n${created.key}\n(shown once: store it now)`, json: created };
      };
    }
    case 'key:revoke': {
      const id = requiredId(values, 'id');
      return async () => {
        const { revokeApiKey } = await import('../services/keys/key-service.js');
        const revoked = await revokeApiKey(id);
        return { human: revoked ? 'revoked' : 'no active key with that id', json: { id, revoked } };
      };
    }
    case 'key:list': {
      const organisationId = requiredId(values, 'org');
      return async () => {
        const { listApiKeys } = await import('../services/keys/key-service.js');
        const keys = await listApiKeys(organisationId);
        return {
          human:
            keys.map((k) => `${k.id}  ${k.kind.padEnd(11)} ${k.prefix}…  ${k.name}${k.revokedAt ? '  (revoked)' : ''}`).join('\n') ||
            'no keys',
          json: { keys },
        };
      };
    }
    case 'demo':
      return async () => {
        const { buildDemo } = await import('./demo.js');
        return demoOutcome(config.PORT, await buildDemo(config.PORT));
      };
    case 'check': {
      const venueIds = idList(values.venues as string | undefined);
      const queuePrefixes = list(values['queue-prefixes'] as string | undefined) ?? [config.QUEUE_PREFIX];
      return async () => {
        const { checkInvariants, totalViolations } = await import('../services/invariants/check-invariants.js');
        const counts = await checkInvariants({ venueIds, queuePrefixes });
        const violations = totalViolations(counts);
        const human = Object.entries(counts)
          .map(([name, count]) => `${String(count).padStart(8)}  ${name}`)
          .concat(violations ? `${violations} violation(s)` : 'every invariant holds')
          .join('\n');
        // Operators and scripts can act on the exit code alone: 2 means the database breaks an invariant.
        return { human, json: { ...counts, violations }, exitCode: violations ? 2 : 0 };
      };
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command given');
  }
}

function demoOutcome(port: number, demo: DemoResult): Outcome {
  const bySize = new Map<string, string[]>();
  for (const t of demo.venue.tables)
    bySize.set(`${t.minSeats}–${t.maxSeats}`, [...(bySize.get(`${t.minSeats}–${t.maxSeats}`) ?? []), t.name]);
  const human = [
    `organisation ${demo.organisationId}`,
    `venue        ${demo.venueId}  ${demo.venue.name} (${demo.venue.timezone})`,
    `live key        ${demo.keys.live}`,
    `publishable key ${demo.keys.publishable} (origins: http://localhost:${port}, http://127.0.0.1:${port})`,
    `test key        ${demo.keys.test}  (test organisation ${demo.testOrganisationId}, its venue ${demo.testVenueId})`,
    'Keys are shown once.',
    '',
    'Shifts (every day, venue local time):',
    ...demo.venue.shifts.map((s) => `  ${s.name.padEnd(10)} ${s.startTime}–${s.endTime}, last seating ${s.lastSeatingTime}`),
    `Tables (${demo.venue.tables.length}, seats min–max):`,
    ...[...bySize].map(
      ([seats, names]) => `  ${seats.padEnd(5)} ${names.sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).join(' ')}`,
    ),
    '',
    `Try: curl -H "Authorization: Bearer ${demo.keys.live}" "http://127.0.0.1:${port}/api/v1/availability/slots?venueId=${demo.venueId}&serviceDate=<YYYY-MM-DD>&partySize=2"`,
    'The API must use the same DATABASE_URL as this command, or it will not know these keys.',
  ].join('\n');
  // --json keeps exactly the shape the command line promises: {organisationId, venueId, keys}.
  return { human, json: { organisationId: demo.organisationId, venueId: demo.venueId, keys: demo.keys } };
}

const cliOptions = {
  json: { type: 'boolean' },
  test: { type: 'boolean' },
  name: { type: 'string' },
  org: { type: 'string' },
  timezone: { type: 'string' },
  country: { type: 'string' },
  kind: { type: 'string' },
  scopes: { type: 'string' },
  venues: { type: 'string' },
  origins: { type: 'string' },
  id: { type: 'string' },
  'rate-limit': { type: 'string' },
  'queue-prefixes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Unknown or malformed options are usage errors like any other, answered in JSON with --json. */
function parseCommandLine() {
  try {
    return parseArgs({ allowPositionals: true, options: cliOptions });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `npm run cli -- <command>` with the process's arguments and configuration: the exit code. */
export async function runCli(config: Config): Promise<number> {
  let json = process.argv.slice(2).includes('--json');
  try {
    const { positionals, values } = parseCommandLine();
    json = values.json === true;
    if (values.help) {
      console.log(usage);
      return 0;
    }
    const command = commandOf(config, positionals[0], values);
    const result = await command().finally(closeConnections);
    console.log(json ? JSON.stringify(result.json) : result.human);
    return result.exitCode ?? 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (json) console.log(JSON.stringify({ error: message }));
    else console.error(`error: ${message}${err instanceof UsageError ? `\n\n${usage}` : ''}`);
    return 1;
  }
}

/** Ends what a command that ran opened (the database pool, the queues and their Redis connection), so that the process exits. */
async function closeConnections(): Promise<void> {
  const { closeQueues } = await import('../queues/queues.js');
  await Promise.all([pool().end({ timeout: 5 }), closeQueues()]);
}
