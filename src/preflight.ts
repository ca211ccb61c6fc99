import net from 'node:net';
import type { Config } from './config.js';
import { parseDatabaseUrl } from './lib/database-url.js';
import { describeTopology, redisTopologyOf, type HostPort, type RedisTopology } from './redis/topology.js';

function addressOf(url: string, defaultPort: number): HostPort {
  const { hostname, port } = new URL(url);
  return { host: hostname || '127.0.0.1', port: Number(port) || defaultPort };
}

/** The addresses of which one must answer: the server, or any of the sentinels or cluster seeds. */
function redisAddresses(topology: RedisTopology): HostPort[] {
  if (topology.mode === 'sentinel') return topology.sentinels;
  if (topology.mode === 'cluster') return topology.nodes;
  return [addressOf(topology.url, 6379)];
}

function reachable({ host, port }: HostPort): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
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

/** The one line saying how to start PostgreSQL or Redis when they do not answer; null when both do. */
export async function explainUnreachable(config: Config): Promise<string | null> {
  const topology = redisTopologyOf(config);
  // Several PostgreSQL hosts (a failover pair): any answering will do, as for the Redis sentinels.
  const database = parseDatabaseUrl(config.DATABASE_URL);
  const pgAddresses = typeof database === 'string' ? [] : database.hosts;
  const [pg, redis] = await Promise.all([
    Promise.all(pgAddresses.map(reachable)).then((answers) => answers.includes(true)),
    Promise.all(redisAddresses(topology).map(reachable)).then((answers) => answers.includes(true)),
  ]);
  const missing = [!pg && `PostgreSQL (${config.DATABASE_URL.replace(/\/\/[^@]*@/, '//')})`, !redis && describeTopology(topology)].filter(
    Boolean,
  );
  return missing.length ? `Cannot reach ${missing.join(' and ')}: ${howToStart}.` : null;
}
