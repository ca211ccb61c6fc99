import { describe, expect, it } from 'vitest';
import { renderError, toApiError } from '../../src/http/error-handler.js';
import { ApiError, errorStatus } from '../../src/core/errors.js';

describe('error rendering (docs/api.md "Requests")', () => {
  it.each([
    [new Error('relation "secret_table" does not exist'), 'internal_error', 500],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'unavailable', 503],
    [new Error('wrapped', { cause: Object.assign(new Error('gone'), { code: 'CONNECTION_ENDED' }) }), 'unavailable', 503],
    [Object.assign(new Error('too big'), { type: 'entity.too.large' }), 'payload_too_large', 413],
    [Object.assign(new Error('bad json'), { type: 'entity.parse.failed' }), 'invalid_request', 400],
    [new ApiError('conflict'), 'conflict', 409],
  ])('%s → %s %i', (err, code, status) => {
    const apiError = toApiError(err);
    expect(apiError.code).toBe(code);
    expect(apiError.status).toBe(status);
  });

  it('a 500 carries the fixed message and nothing of the cause', () => {
    const rendered = renderError(toApiError(new Error('select * from api_keys failed at line 3')), 'req-1', true);
    expect(rendered.status).toBe(500);
    expect(JSON.parse(rendered.body)).toEqual({
      error: { code: 'internal_error', message: 'Internal server error', details: {}, requestId: 'req-1' },
      livemode: true,
    });
  });

  it('every code has a status and the status depends only on the code', () => {
    for (const [code, status] of Object.entries(errorStatus)) {
      expect(new ApiError(code as keyof typeof errorStatus).status).toBe(status);
    }
  });
});
