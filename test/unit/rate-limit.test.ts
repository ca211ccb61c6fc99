import { describe, expect, it } from 'vitest';
import { mustCountExactly } from '../../src/http/rate-limit.js';

describe('rate-limit counting mode', () => {
  it.each([
    // first hit of a window always asks Redis
    [{ synced: false, shared: 0, pending: 0, sending: 0 }, 600, true],
    // far from the limit: counted locally, sent in batches
    [{ synced: true, shared: 100, pending: 5, sending: 5 }, 600, false],
    // within 10 % (at least 10) of the limit: every hit asks Redis
    [{ synced: true, shared: 530, pending: 5, sending: 5 }, 600, true],
    [{ synced: true, shared: 539, pending: 0, sending: 0 }, 600, false],
    [{ synced: true, shared: 540, pending: 0, sending: 0 }, 600, true],
    // small limits are always exact
    [{ synced: true, shared: 1, pending: 0, sending: 0 }, 3, true],
    [{ synced: true, shared: 0, pending: 0, sending: 0 }, 10, true],
    [{ synced: true, shared: 0, pending: 0, sending: 0 }, 11, false],
    // over the limit stays exact
    [{ synced: true, shared: 700, pending: 0, sending: 0 }, 600, true],
  ])('%j with limit %i → exact %s', (counter, limit, exact) => {
    expect(mustCountExactly(counter, limit)).toBe(exact);
  });
});
