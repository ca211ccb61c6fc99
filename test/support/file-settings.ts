import { parseConfig, processConfig, useProcessConfig, type Config } from '../../src/config.js';

/**
 * Settings of one test file alone, as environment variables (a queue prefix of its own, a shorter
 * statement timeout…): made the process's configuration before anything has used it (the database,
 * Redis and the queues are created on first use, from it), and put in the environment that the
 * file's child processes (workers, the CLI) inherit. Call it at the top of the file, after the
 * imports: no module reads the configuration when it is loaded. A script that runs app modules in a
 * process of its own (a benchmark, a chaos scenario, a test's child) calls it too, as its entry
 * point: processConfig() refuses to guess.
 */
export function useFileSettings(settings: Record<string, string>): Config {
  Object.assign(process.env, settings);
  const config = parseConfig(process.env);
  useProcessConfig(config);
  return config;
}

/** A queue prefix of this file alone (the run's, with `suffix`): no worker of another file takes its jobs, nor its workers theirs. */
export function useOwnQueuePrefix(suffix: string): Config {
  return useFileSettings({ QUEUE_PREFIX: `${processConfig().QUEUE_PREFIX}${suffix}` });
}
