import { describe, expect, it } from 'vitest';
import { destinationOf, postponementMs, queuedPostponementMs } from '../../src/lib/webhook-destination.js';

describe('destination of a webhook URL', () => {
  it.each([
    { url: 'https://Partner.Example/hooks/a?x=1', destination: 'https://partner.example' },
    { url: 'https://partner.example:443/other', destination: 'https://partner.example' },
    { url: 'https://partner.example:8443/a', destination: 'https://partner.example:8443' },
    { url: 'http://127.0.0.1:4000/hooks/1', destination: 'http://127.0.0.1:4000' },
    { url: 'https://user:pw@partner.example/a', destination: 'https://partner.example' },
    { url: 'https://[::1]:9000/a', destination: 'https://[::1]:9000' },
    { url: 'not a url', destination: null },
    { url: 'mailto:someone@example.com', destination: null },
  ])('$url → $destination', ({ url, destination }) => {
    expect(destinationOf(url)).toBe(destination);
  });
});

describe('postponement of a job whose destination is saturated', () => {
  it.each([
    { postponed: 0, random: 0, ms: 100 },
    { postponed: 0, random: 0.999999, ms: 200 },
    { postponed: 1, random: 0, ms: 200 },
    { postponed: 3, random: 0.5, ms: 1200 },
    { postponed: 5, random: 0, ms: 2500 },
    { postponed: 5, random: 0.999999, ms: 5000 },
    { postponed: 50, random: 0, ms: 2500 },
    { postponed: -1, random: 0, ms: 100 },
  ])('after $postponed postponements (random $random): $ms ms', ({ postponed, random, ms }) => {
    expect(postponementMs(postponed, random)).toBe(ms);
  });
});

describe('postponement of a job behind others waiting for the same destination', () => {
  it.each([
    { case: 'nothing measured yet: the doubling one', waitersAhead: 5000, holdMs: 0, postponed: 0, ms: 150 },
    { case: 'few ahead of it: the doubling one', waitersAhead: 10, holdMs: 10, postponed: 0, ms: 150 },
    { case: 'its turn behind 2,000 jobs of 10 ms on 4 slots', waitersAhead: 2000, holdMs: 10, postponed: 0, ms: 5000 },
    { case: 'a minute at most', waitersAhead: 100, holdMs: 10_000, postponed: 0, ms: 60_000 },
    { case: 'Redis did not say', waitersAhead: null, holdMs: 10, postponed: 3, ms: 1200 },
  ])('$case: $ms ms', ({ waitersAhead, holdMs, postponed, ms }) => {
    expect(queuedPostponementMs({ waitersAhead, holdMs, slots: 4, postponed, random: 0.5 })).toBe(ms);
  });
});
