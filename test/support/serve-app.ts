// Serves the real app on PORT without the start-up reachability check, so that a test can run it
// against a database or Redis that does not answer.
import { createApp } from '../../src/http/app.js';
import { apiRoutes } from '../../src/routes/index.js';
import { useFileSettings } from './file-settings.js';

createApp({ routes: apiRoutes, config: useFileSettings({}) }).listen(Number(process.env.PORT), '127.0.0.1', () =>
  process.stdout.write('listening\n'),
);
