import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { formatRequestLine, type RequestLine } from '../../src/logger.js';

/** The line pino itself writes for the same fields, with the same options as the app's logger. */
function pinoLine(fields: RequestLine, time: number): string {
  let written = '';
  const sink = new Writable({ write: (chunk, _encoding, done) => ((written += String(chunk)), done()) });
  pino({ level: 'info', base: { pid: process.pid }, timestamp: () => `,"time":${time}` }, sink).info(fields, 'request');
  return written;
}

describe('the request line', () => {
  it.each<RequestLine>([
    { requestId: '8c2f5b0e-3f0a-4a55-9b5c-0a1b2c3d4e5f', method: 'GET', path: '/api/v1/venues/x', status: 200, ms: 1.25 },
    { requestId: 'client-id.1:2', method: 'POST', path: '/api/v1/reservations', status: 201, ms: 0 },
    { requestId: 'r', method: 'DELETE', path: '/api/v1/guests/"quoted"\\back\nline/é/\u2028', status: 404, ms: 1234.5 },
  ])('is the line pino writes for %j', (fields) => {
    expect(formatRequestLine(fields, 1_790_000_000_000)).toBe(pinoLine(fields, 1_790_000_000_000));
  });
});
