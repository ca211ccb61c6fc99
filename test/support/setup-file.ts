import { processConfig } from '../../src/config.js';
import { setLogLevel } from '../../src/logger.js';

// What an entry point does for its process (src/roles/start-process.ts), for each test file's:
// the log level of the run's configuration (LOG_LEVEL, silent unless the run sets it).
setLogLevel(processConfig().LOG_LEVEL);
