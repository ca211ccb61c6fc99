/** One server of a PostgreSQL connection URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/** A PostgreSQL URL read: its servers in the order given, and the URL with each of them alone. */
export interface DatabaseUrl {
  hosts: DatabaseHost[];
  /** The same URL (user, password, database, parameters) naming `host` only. */
  urlFor: (host: DatabaseHost) => string;
  /** `target_session_attrs` of the URL, if it has one. */
  targetSessionAttrs: string | null;
}

const defaultPort = 5432;

/**
 * Reads `postgres://user:password@h1:p1,h2:p2/db?…` (libpq's multi-host form, which WHATWG URL
 * parsing refuses) or a URL of one server; the message of what is wrong otherwise. A host without
 * a port takes 5432; an IPv6 address goes in brackets.
 */
export function parseDatabaseUrl(url: string): DatabaseUrl | string {
  const scheme = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (!scheme) return 'must be a postgres:// or postgresql:// URL';
  const [, prefix, authority, rest] = scheme;
  const at = authority.lastIndexOf('@');
  const userInfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const hostList = authority.slice(at + 1);
  const hosts: DatabaseHost[] = [];
  for (const part of hostList.split(',')) {
    let parsed: URL;
    try {
      parsed = new URL(`${prefix}${userInfo}${part}${rest}`);
    } catch {
      return `invalid host "${part}"`;
    }
    if (!parsed.hostname) return `invalid host "${part}"`;
    hosts.push({ host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port ? Number(parsed.port) : defaultPort });
  }
  const first = new URL(`${prefix}${userInfo}${hostList.split(',')[0]}${rest}`);
  const attrs = first.searchParams.get('target_session_attrs');
  if (attrs !== null && !['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'].includes(attrs)) {
    return `target_session_attrs=${attrs} is not supported`;
  }
  return {
    hosts,
    urlFor: ({ host, port }) => `${prefix}${userInfo}${host.includes(':') ? `[${host}]` : host}:${port}${rest}`,
    targetSessionAttrs: attrs,
  };
}
