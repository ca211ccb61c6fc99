import { describe, expect, it } from 'vitest';
import { compileRoutePath } from '../../src/http/route-path.js';

describe('route path matching', () => {
  it.each([
    ['/api/v1/venues', '/api/v1/venues', {}],
    ['/api/v1/venues', '/api/v1/venues/', {}],
    ['/api/v1/venues/:id', '/api/v1/venues/abc', { id: 'abc' }],
    ['/api/v1/venues/:id', '/api/v1/venues/a%20b%2Fc', { id: 'a b/c' }],
    ['/api/v1/venues/:id/tables/:tableId', '/api/v1/venues/v1/tables/t.2/', { id: 'v1', tableId: 't.2' }],
    ['/api/v1/guests/lookup', '/api/v1/guests/lookup', {}],
    ['/api/v1/openapi.json', '/api/v1/openapi.json', {}],
  ])('%s matches %s', (pattern, path, params) => {
    expect(compileRoutePath(pattern)(path)).toEqual(params);
  });

  it.each([
    ['/api/v1/venues', '/api/v1/Venues'],
    ['/api/v1/venues', '/api/v1/venues//'],
    ['/api/v1/venues', '/api/v1/venuesx'],
    ['/api/v1/venues/:id', '/api/v1/venues/'],
    ['/api/v1/venues/:id', '/api/v1/venues//'],
    ['/api/v1/venues/:id', '/api/v1/venues/a/b'],
    ['/api/v1/openapi.json', '/api/v1/openapiXjson'],
  ])('%s does not match %s', (pattern, path) => {
    expect(compileRoutePath(pattern)(path)).toBeNull();
  });

  it('throws the URIError of a parameter that does not percent-decode', () => {
    expect(() => compileRoutePath('/api/v1/venues/:id')('/api/v1/venues/%E0%A4%A')).toThrow(URIError);
  });
});
