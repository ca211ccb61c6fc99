import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/lib/database-url.js';
import { parseConfig } from '../../src/config.js';

describe('PostgreSQL URLs of one host or several', () => {
  it.each([
    {
      url: 'postgres://postgres@127.0.0.1:5432/db',
      hosts: [{ host: '127.0.0.1', port: 5432 }],
      attrs: null,
    },
    {
      url: 'postgres://app:s%40cret@db1:5433,db2:5434/floorline?target_session_attrs=read-write&sslmode=require',
      hosts: [
        { host: 'db1', port: 5433 },
        { host: 'db2', port: 5434 },
      ],
      attrs: 'read-write',
    },
    {
      url: 'postgresql://db1,db2:6000,[::1]:7000/floorline',
      hosts: [
        { host: 'db1', port: 5432 },
        { host: 'db2', port: 6000 },
        { host: '::1', port: 7000 },
      ],
      attrs: null,
    },
  ])('$url', ({ url, hosts, attrs }) => {
    const parsed = parseDatabaseUrl(url);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(parsed.hosts).toEqual(hosts);
    expect(parsed.targetSessionAttrs).toBe(attrs);
  });

  it('each host alone keeps the user, password, database and parameters', () => {
    const parsed = parseDatabaseUrl('postgres://app:s%40cret@db1:5433,[::1]:5434/floorline?target_session_attrs=read-write');
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(parsed.hosts.map(parsed.urlFor)).toEqual([
      'postgres://app:s%40cret@db1:5433/floorline?target_session_attrs=read-write',
      'postgres://app:s%40cret@[::1]:5434/floorline?target_session_attrs=read-write',
    ]);
  });

  it.each([
    { url: 'mysql://db1/x', problem: 'must be a postgres:// or postgresql:// URL' },
    { url: 'postgres://db1:5432,:5433/x', problem: 'invalid host ":5433"' },
    { url: 'postgres://db1:99999/x', problem: 'invalid host "db1:99999"' },
    { url: 'postgres://db1,db2/x?target_session_attrs=writable', problem: 'target_session_attrs=writable is not supported' },
  ])('$url: $problem', ({ url, problem }) => {
    expect(parseDatabaseUrl(url)).toBe(problem);
  });

  it('DATABASE_URL and DATABASE_DIRECT_URL take several hosts; a bad one names the variable', () => {
    const url = 'postgres://postgres@10.0.0.1:5432,10.0.0.2:5432/floorline?target_session_attrs=read-write';
    expect(parseConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: url })).toMatchObject({ DATABASE_URL: url, DATABASE_DIRECT_URL: url });
    expect(() => parseConfig({ DATABASE_URL: 'postgres://h1:1,:2/x' })).toThrow(
      'Invalid environment variable DATABASE_URL: invalid host ":2"',
    );
  });
});
