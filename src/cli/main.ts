import { ConfigError, parseConfig, useProcessConfig, type Config } from '../config.js';
import { createDatabase, databaseOptionsOf, useDatabase } from '../db/client.js';
import { setLogLevel } from '../logger.js';
import { runCli } from './commands.js';

/** `npm run cli`: the configuration first (one line per variable at fault), then the command. */
let config: Config;
try {
  config = parseConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  for (const line of err.issues) console.error(line);
  process.exit(1);
}
useProcessConfig(config);
setLogLevel(config.LOG_LEVEL);
useDatabase(createDatabase(databaseOptionsOf(config)));
process.exitCode = await runCli(config);
