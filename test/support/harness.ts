import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { processConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import { apiRoutes } from '../../src/routes/index.js';
import { EventStreams } from '../../src/services/events/event-stream.js';
import { createApiKey, createOrganisation, type NewKey } from '../../src/services/keys/key-service.js';
import { createVenue, type VenueInput } from '../../src/services/venues/venue-service.js';
import { checkConformance } from './contract.js';

export interface TestServer {
  url: string;
  /** The live event streams the app serves (closeAll: what the web role does when it stops). */
  eventStreams: EventStreams;
  close: () => Promise<void>;
}

/** The configuration of the run (test/support/global-setup.ts) with a file's own `overrides`, for the app and roles it builds. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...processConfig(), ...overrides };
}

/** The real Express app on an ephemeral 127.0.0.1 port, built with `config` (the run's by default). */
export async function startTestServer(options: { config?: Config } = {}): Promise<TestServer> {
  const config = options.config ?? testConfig();
  const eventStreams = new EventStreams(config);
  const app = createApp({ routes: apiRoutes, config, eventStreams });
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  // As the web role: with Node's 5 s default, a keep-alive connection the server closes as idle while
  // the client reuses it under load is reset (an ECONNRESET seen once in a full run).
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    eventStreams,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The real app for a test file: started before its tests and closed after them (vitest runs afterAll
 * hooks last-registered first, so a file's own teardown runs while the server still listens).
 */
export function useTestServer(options: { config?: Config } = {}): TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer(options);
  });
  afterAll(async () => server?.close());
  return {
    get url() {
      if (!server) throw new Error('The test server starts in beforeAll: read its url inside a test or a hook.');
      return server.url;
    },
    get eventStreams() {
      if (!server) throw new Error('The test server starts in beforeAll: read its streams inside a test or a hook.');
      return server.eventStreams;
    },
    close: async () => server?.close(),
  };
}

export interface Tenant {
  organisationId: string;
  venueId: string;
  key: string;
  keyId: string;
}

/** A fresh organisation with one venue and a key with every scope (override with `key`). */
export async function createTenant(
  options: { test?: boolean; venue?: Partial<VenueInput>; key?: Partial<Omit<NewKey, 'organisationId'>> } = {},
): Promise<Tenant> {
  const org = await createOrganisation(`Org ${Math.random().toString(36).slice(2, 8)}`, options.test ?? false);
  const venue = await createVenue(org.id, { name: 'Test venue', timezone: 'Europe/Rome', countryCode: 'IT', ...options.venue });
  const created = await createApiKey({ organisationId: org.id, kind: options.test ? 'test' : 'live', name: 'test key', ...options.key });
  return { organisationId: org.id, venueId: venue.id, key: created.key, keyId: created.id };
}

export async function createKey(organisationId: string, options: Partial<Omit<NewKey, 'organisationId'>> = {}): Promise<string> {
  const created = await createApiKey({ organisationId, kind: 'live', name: 'extra key', ...options });
  return created.key;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Client {
  request: <T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ) => Promise<ApiResponse<T>>;
  get: <T = any>(path: string, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
  post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
  patch: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
  put: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
  delete: <T = any>(path: string, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
}

/** A tiny HTTP client for `/api/v1` with a Bearer key (or none). */
export function client(baseUrl: string, key?: string): Client {
  const request = async <T>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers };
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = `${baseUrl}${path.startsWith('/') && !path.startsWith('/api/') && !path.startsWith('/admin') && !path.startsWith('/healthz') && !path.startsWith('/readyz') ? `/api/v1${path}` : path}`;
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    checkConformance(method, url, res.status, res.headers, text);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
  return {
    request,
    get: (path, headers) => request('GET', path, { headers }),
    post: (path, body, headers) => request('POST', path, { body, headers }),
    patch: (path, body, headers) => request('PATCH', path, { body, headers }),
    put: (path, body, headers) => request('PUT', path, { body, headers }),
    delete: (path, headers) => request('DELETE', path, { headers }),
  };
}
