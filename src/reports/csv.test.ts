import { describe, expect, it } from 'vitest';
import { toCsv } from './csv.js';

const one = (value: string | number | boolean | null) => toCsv(['cell'], [{ cell: value }]).split('\r\n')[1];

describe('toCsv', () => {
  it('escapes text cells a spreadsheet would run as formulas (OWASP: leading = + - @ tab CR)', () => {
    expect(one('=HYPERLINK("http://evil.example","x")')).toBe(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(one('+1+cmd|calc')).toBe(`"'+1+cmd|calc"`);
    expect(one('-2+3')).toBe(`"'-2+3"`);
    expect(one('@SUM(A1:A9)')).toBe(`"'@SUM(A1:A9)"`);
    expect(one('\t=1')).toBe(`"'\t=1"`);
    expect(one('\r=1')).toBe(`"'\r=1"`);
    expect(one('-5')).toBe(`"'-5"`);
    expect(toCsv(['=evil'], [])).toBe(`"'=evil"\r\n`);
  });

  it('leaves the numbers it computes, negative ones included, and harmless text as they are', () => {
    expect(one(-125)).toBe('-125');
    expect(one(0)).toBe('0');
    expect(one('up-first')).toBe('up-first');
    expect(one('a=b')).toBe('a=b');
    expect(one(true)).toBe('true');
    expect(one(null)).toBe('');
    expect(one('a,b')).toBe('"a,b"');
    expect(one(' padded')).toBe('" padded"');
  });
});
