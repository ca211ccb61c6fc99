import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/lib/csv.js';

describe('csvField', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    [' padded', '" padded"'],
    ['', ''],
    [null, ''],
    [undefined, ''],
    [42, '42'],
    [true, 'true'],
    ['Città, €', '"Città, €"'],
  ])('writes %j as %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('joins a line with commas and ends it with CRLF', () => {
    expect(csvLine(['id', 'a "b"', null, 3])).toBe('id,"a ""b""",,3\r\n');
  });
});
