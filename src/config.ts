import { createHash } from 'node:crypto';
import { z } from 'zod';
import { redisSettingsProblems } from './redis/topology.js';
import { parseTrustProxy } from './lib/trust-proxy.js';
import { isPlaceholderSecret } from './lib/placeholder-secret.js';
import { parseDatabaseUrl } from './lib/database-url.js';

const bool = z.stringbool({ truthy: ['true', '1', 'yes'], falsy: ['false', '0', 'no', ''] });

// A PostgreSQL URL of one server or several (`postgres://h1:5432,h2:5432/db?target_session_attrs=read-write`).
const databaseUrl = z.string().superRefine((value, ctx) => {
  const parsed = parseDatabaseUrl(value);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});

const minProductionSecretLength = 32;
const minProductionPasswordLength = 16;

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    // Several hosts: the one accepting writes is found and followed across a failover (docs/operations.md "PostgreSQL failover").
    DATABASE_URL: databaseUrl.default('postgres://postgres@127.0.0.1:5432/postgres'),
    // One Redis mode (docs/operations.md "Running on several machines"): REDIS_URL (default redis://127.0.0.1:6379),
    // or REDIS_SENTINELS + REDIS_SENTINEL_MASTER, or REDIS_CLUSTER_NODES.
    REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
    REDIS_SENTINELS: z.string().optional(),
    REDIS_SENTINEL_MASTER: z.string().optional(),
    REDIS_SENTINEL_PASSWORD: z.string().optional(),
    REDIS_CLUSTER_NODES: z.string().optional(),
    // The servers' password with REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL it is in the URL).
    REDIS_PASSWORD: z.string().optional(),
    // A worker whose queue connection has not come back after this long exits non-zero (its supervisor restarts it); 0: never.
    REDIS_GIVE_UP_AFTER_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    QUEUE_PREFIX: z.string().min(1).max(100).default('{floorline}'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SECRETS_KEY: z.string().min(16).optional(),
    ADMIN_USER: z.string().min(1).default('admin'),
    ADMIN_PASSWORD: z.string().min(1).optional(),
    // Proxies in front of the API whose X-Forwarded-For is believed (docs/security.md "Client address"): false, a hop count, or addresses/CIDRs; true is one hop.
    TRUST_PROXY: z
      .string()
      .default('false')
      .transform((value, ctx) => {
        const parsed = parseTrustProxy(value);
        if (typeof parsed === 'string') {
          ctx.addIssue({ code: 'custom', message: parsed });
          return z.NEVER;
        }
        return parsed;
      }),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
    RATE_LIMIT_WIDGET_PER_MINUTE: z.coerce.number().int().min(1).default(120),
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: bool.default(false),
    // BullMQ lock of a webhook job: a worker that dies mid-delivery hands the job over once it expires.
    WEBHOOK_WORKER_LOCK_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
    // BullMQ lock of an import job: a worker that dies mid-import hands the job over once it expires.
    IMPORT_WORKER_LOCK_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
    WEBHOOK_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
    // Attempts under way at once per destination (origin of the URL), across every worker-webhooks process.
    WEBHOOK_DESTINATION_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(4),
    // A destination is disabled after this many failed attempts in a row AND this long failing (docs/webhooks.md "Endpoint health").
    WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).max(1_000_000).default(50),
    WEBHOOK_DISABLE_AFTER_MINUTES: z.coerce.number().int().min(0).max(525_600).default(2880),
    // Events of one organisation taken at once beyond its burst, per second (docs/architecture.md "Fair queues", pacing); 0: no pacing.
    EVENT_PACING_RATE: z.coerce.number().min(0).max(1_000_000).default(100),
    // Events one organisation may have enqueued ahead of its pace before the next are held back.
    EVENT_PACING_BURST: z.coerce.number().int().min(1).max(1_000_000).default(5),
    DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    // Longest a single SQL statement may run (PostgreSQL statement_timeout of every pooled connection); 0: no limit.
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(20_000),
    // `transaction`: DATABASE_URL is a transaction-mode pooler (PgBouncer): no prepared statements, settings per transaction, no session state.
    DATABASE_POOLER: z.enum(['none', 'transaction']).default('none'),
    // A direct (or session-mode) connection for what needs a session: migrations and the live stream's LISTEN; unset: DATABASE_URL.
    DATABASE_DIRECT_URL: databaseUrl.optional(),
    // A streaming replica for reads that tolerate lag (reports, exports, GET /events pages); unset: none.
    DATABASE_READ_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    // Replica lag beyond which those reads go to the primary.
    DATABASE_READ_MAX_LAG_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
    // Port of GET /metrics and GET /healthz of this process; unset: 9464 + the index of its (first) role; 0: none.
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    // When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.
    METRICS_TOKEN: z.string().min(16).optional(),
    // Interface the metrics port binds to (e.g. 127.0.0.1); unset: every interface. Outside development /metrics needs METRICS_TOKEN.
    METRICS_HOST: z.string().min(1).optional(),
    // Bull Board shows the queues but refuses retries, removals and every other change.
    ADMIN_READ_ONLY: bool.default(false),
    // Failed authentications (unknown keys, wrong Bull Board passwords) one client address may make per minute before 429.
    AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(20),
    // Live event streams one key may hold open at once on one web process (beyond: 429).
    STREAMS_PER_KEY: z.coerce.number().int().min(1).max(10_000).default(5),
    // A live event stream is ended after this long (the client resumes with Last-Event-ID).
    STREAM_MAX_LIFETIME_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
    // How often each open stream's key is checked again (revocation, scope or venue change ends the stream).
    STREAM_KEY_RECHECK_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
    // After SIGTERM, how long the web role fails /readyz while still serving before it stops accepting; unset: 5000 in production, 0 otherwise.
    SHUTDOWN_READINESS_DELAY_MS: z.coerce.number().int().min(0).max(600_000).optional(),
  })
  .superRefine((env, ctx) => {
    for (const { variable, message } of redisSettingsProblems(env)) ctx.addIssue({ code: 'custom', path: [variable], message });
    if (env.NODE_ENV === 'production' && env.WEBHOOKS_ALLOW_PRIVATE_TARGETS) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOKS_ALLOW_PRIVATE_TARGETS'], message: 'must not be true when NODE_ENV=production' });
    }
    if (env.NODE_ENV === 'production' && !env.SECRETS_KEY) {
      ctx.addIssue({ code: 'custom', path: ['SECRETS_KEY'], message: 'is required when NODE_ENV=production' });
    }
    if (
      env.NODE_ENV === 'production' &&
      env.SECRETS_KEY &&
      (env.SECRETS_KEY.length < minProductionSecretLength || isPlaceholderSecret(env.SECRETS_KEY))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['SECRETS_KEY'],
        message: `must be a random string of at least ${minProductionSecretLength} characters when NODE_ENV=production (e.g. openssl rand -base64 48), not a placeholder`,
      });
    }
    if (
      env.NODE_ENV === 'production' &&
      env.ADMIN_PASSWORD &&
      (env.ADMIN_PASSWORD.length < minProductionPasswordLength || isPlaceholderSecret(env.ADMIN_PASSWORD))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_PASSWORD'],
        message: `must be at least ${minProductionPasswordLength} characters and not a placeholder when NODE_ENV=production`,
      });
    }
  });

export type Config = z.infer<typeof envSchema> & { secretsKey: Buffer };

/** Configuration that cannot start a process: one line per variable at fault, as printed at start-up. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(issues.join('\n'));
    this.name = 'ConfigError';
  }
}

/**
 * The configuration of `env` (the process's environment, or a test's own), or a ConfigError listing
 * every variable at fault. Pure: reads nothing else and changes nothing; the entry point that calls
 * it says what is wrong and exits.
 */
export function parseConfig(env: Readonly<Record<string, string | undefined>>): Config {
  // An empty variable is an unset one (compose's `${X:-}`): an empty secret is no secret.
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `Invalid environment variable ${issue.path.join('.')}: ${issue.message}`));
  }
  // A fixed development key keeps local data readable across restarts; production must set SECRETS_KEY.
  const secretsKey = createHash('sha256')
    .update(parsed.data.SECRETS_KEY ?? 'floorline-development-secrets-key')
    .digest();
  return { ...parsed.data, secretsKey };
}

let processWide: Config | undefined;

/**
 * The process's configuration, for the entry points, the roles and the process-wide connections they
 * set up (docs/architecture.md "Composition root"): the one the entry point parsed and gave
 * useProcessConfig. Services never ask for it: what they need is handed to them. Asked before the
 * process set it, it throws rather than quietly parse the environment: a test, a benchmark or a child
 * script sets its own (useProcessConfig, useFileSettings) like any entry point.
 */
export function processConfig(): Config {
  if (!processWide) throw new Error('the process configuration is not set: the entry point calls useProcessConfig (setUpProcess) first');
  return processWide;
}

/** Makes `config` the process's configuration: the entry point's, before anything has asked for it. */
export function useProcessConfig(config: Config): void {
  processWide = config;
}
