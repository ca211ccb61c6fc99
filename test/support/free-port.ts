import net, { type AddressInfo } from 'node:net';

/**
 * `count` ports nothing listens on right now, all different (for a process a test or benchmark
 * starts, or one that must refuse connections): each is held until all are chosen, since a port
 * asked for after another was freed may be that same one again.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** One port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}
