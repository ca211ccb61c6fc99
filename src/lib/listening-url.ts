import type { AddressInfo } from 'node:net';

/** The URL a server really listens on, for its start-up line: `http://[::]:3000` when bound to every interface. */
export function listeningUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
