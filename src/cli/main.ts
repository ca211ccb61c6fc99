import { ConfigError, parseConfig, type Config } from '../config.js';
import { setUpProcess } from '../set-up-process.js';
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
setUpProcess(config);
process.exitCode = await runCli(config);
