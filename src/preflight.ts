import net from 'node:net';
import { config } from './config.js';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname || '127.0.0.1', port: Number(port) || defaultPort });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const howToStart =
  'start them with `docker compose up -d postgres redis`, or the local packages: `pg_ctlcluster $(ls /etc/postgresql) main start` and `redis-server --daemonize yes`';

/** Stops start-up with one line saying how to start PostgreSQL or Redis when they do not answer. */
export async function explainUnreachable(): Promise<void> {
  const [pg, redis] = await Promise.all([reachable(config.DATABASE_URL, 5432), reachable(config.REDIS_URL, 6379)]);
  const missing = [!pg && `PostgreSQL (${config.DATABASE_URL.replace(/\/\/[^@]*@/, '//')})`, !redis && `Redis (${config.REDIS_URL})`].filter(Boolean);
  if (missing.length) {
    console.error(`Cannot reach ${missing.join(' and ')}: ${howToStart}.`);
    process.exit(1);
  }
}
