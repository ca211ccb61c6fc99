// Serves the real app on PORT without the start-up reachability check, so that a test can run it
// against a database or Redis that does not answer.
import { parseConfig } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import { apiRoutes } from '../../src/routes/index.js';

createApp({ routes: apiRoutes, config: parseConfig(process.env) }).listen(Number(process.env.PORT), '127.0.0.1', () =>
  process.stdout.write('listening\n'),
);
