import { describe, expect, it } from 'vitest';
import { destinationOf, postponementMs } from '../../src/lib/webhook-destination.js';

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
