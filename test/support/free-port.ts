import net, { type AddressInfo } from 'node:net';

/** A port nothing listens on right now (for a process a test or benchmark starts, or one that must refuse connections). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
