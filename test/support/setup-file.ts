import { parseConfig, useProcessConfig } from '../../src/config.js';
import { setLogLevel } from '../../src/logger.js';

// What an entry point does for its process (src/roles/start-process.ts), for each test file's: the
// run's configuration (its environment, set by the global setup) made the process's, and its log
// level (LOG_LEVEL, silent unless the run sets it). A file with settings of its own replaces it
// (useFileSettings).
const config = parseConfig(process.env);
useProcessConfig(config);
setLogLevel(config.LOG_LEVEL);
