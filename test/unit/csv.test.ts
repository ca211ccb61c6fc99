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
    // Spreadsheet formulas (OWASP CSV injection): a single quote in front, quoted.
    ["=cmd|' /C calc'!A0", `"'=cmd|' /C calc'!A0"`],
    ['+1+1', `"'+1+1"`],
    ['-2+3', `"'-2+3"`],
    ['@SUM(A1)', `"'@SUM(A1)"`],
    ['\t=1', `"'\t=1"`],
    ['\r=1', `"'\r=1"`],
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['a=b', 'a=b'],
    [-3, '-3'],
    ['+393471234567', '+393471234567'],
    ['-1.5', '-1.5'],
    ['+1e3', `"'+1e3"`],
  ])('writes %j as %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('joins a line with commas and ends it with CRLF', () => {
    expect(csvLine(['id', 'a "b"', null, 3])).toBe('id,"a ""b""",,3\r\n');
  });
});
