import { useProcessConfig, type Config } from './config.js';
import { createDatabase, databaseOptionsOf, useDatabase } from './db/client.js';
import { setLogLevel } from './logger.js';

/**
 * What an entry point does with the configuration it parsed, before anything else runs: makes it
 * the process's, sets the log level and builds the process's database from it.
 */
export function setUpProcess(config: Config): void {
  useProcessConfig(config);
  setLogLevel(config.LOG_LEVEL);
  useDatabase(createDatabase(databaseOptionsOf(config)));
}
