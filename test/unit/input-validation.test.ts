import { describe, expect, it } from 'vitest';
import { instantParam, invalidTextFields, isoDate, parseOrThrow } from '../../src/core/validation.js';
import { ApiError } from '../../src/core/errors.js';
import { z } from 'zod';

describe('invalidTextFields: U+0000 and lone UTF-16 surrogates, as values or keys, at any depth', () => {
  it.each([
    ['plain text', { a: 'hello' }, []],
    ['a well-formed pair (emoji)', { a: 'x\ud83d\ude00y' }, []],
    ['U+FFFF and a BOM', { a: '\uffff\ufeff' }, []],
    ['U+0000', { a: 'a\u0000b' }, ['a']],
    ['a lone high surrogate', { a: '\ud800' }, ['a']],
    ['a high surrogate at the end', { a: 'ab\udbff' }, ['a']],
    ['a lone low surrogate', { a: 'a\udc00b' }, ['a']],
    ['two high surrogates', { a: '\ud800\ud800\udc00' }, ['a']],
    ['low before high', { a: '\udc00\ud800' }, ['a']],
    ['in a nested row', { rows: [{ ok: 'x' }, { notes: '\ud800' }] }, ['rows.1.notes']],
    ['in a key', { ['k\udfff']: 1 }, ['k\udfff']],
    ['a top-level string', '\ud800', ['']],
    ['numbers and nulls', { a: 1, b: null, c: [true] }, []],
  ])('%s', (_label, input, fields) => {
    expect(invalidTextFields(input)).toEqual(fields);
  });

  it('parseOrThrow answers the 400 naming the field before the schema is applied', () => {
    const error = (() => {
      try {
        parseOrThrow(z.object({ notes: z.string() }), { notes: 'a\ud800' }, 'body');
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).details).toEqual({ fields: ['notes'] });
  });
});

describe('the dates and instants taken', () => {
  it.each([
    ['0000-12-31', false],
    ['0001-01-01', false],
    ['0001-01-02', true],
    ['2028-02-29', true],
    ['2026-02-29', false],
    ['9999-12-28', true],
    ['9999-12-29', false],
    ['9999-12-31', false],
  ])('date %s → %s', (date, taken) => {
    expect(isoDate.safeParse(date).success).toBe(taken);
  });

  it.each([
    ['0000-12-31T23:59:59.999Z', false],
    ['0001-01-01T00:00:00.000Z', true],
    ['0001-01-01T00:30:00+01:00', false],
    ['9999-12-31T23:59:59.999Z', true],
    ['9999-12-31T23:59:59-14:00', false],
    ['9999-12-31T09:00:00-14:00', true],
  ])('instant %s → %s', (instant, taken) => {
    expect(instantParam.safeParse(instant).success).toBe(taken);
  });
});
