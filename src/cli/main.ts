import { ConfigError, parseConfig, type Config } from '../config.js';

/** `npm run cli`: the configuration first (one line per variable at fault), then the command. */
let config: Config;
try {
  config = parseConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  for (const line of err.issues) console.error(line);
  process.exit(1);
}
// Loaded once the configuration is known to be valid: some modules behind the commands still read
// the process's configuration when they are loaded (src/db/client.ts).
const { runCli } = await import('./commands.js');
process.exitCode = await runCli(config);
