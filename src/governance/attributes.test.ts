/** The attribute limits: Svc-Tags parsing, metadata checks and list filters, at and past each bound. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { attributeFilters, checkMetadata, parseTags } from './attributes.js';

function refusal(run: () => unknown): { param: unknown; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    const gatewayError = error as GatewayError;
    expect(gatewayError.code).toBe('invalid_request');
    return { param: gatewayError.options.param, message: gatewayError.message };
  }
  throw new Error('expected a refusal');
}

describe('parseTags', () => {
  it('reads pairs with spaces around items and around =, and treats absent or blank as none', () => {
    expect(parseTags(' team = search ,feature=a.b:c/d@e+f-g_h ')).toEqual({
      team: 'search',
      feature: 'a.b:c/d@e+f-g_h',
    });
    expect(parseTags(undefined)).toBeNull();
    expect(parseTags('   ')).toBeNull();
    expect(parseTags(['a=1', 'b=2'])).toEqual({ a: '1', b: '2' });
  });

  it('takes exactly the limits: 10 pairs, 64-character keys, 128-character values, 2048 bytes', () => {
    const ten = Array.from({ length: 10 }, (_, index) => `k${index}=v`).join(',');
    expect(Object.keys(parseTags(ten)!)).toHaveLength(10);
    expect(parseTags(`${'k'.repeat(64)}=${'v'.repeat(128)}`)).toEqual({ ['k'.repeat(64)]: 'v'.repeat(128) });
    for (const header of [
      `${ten},k10=v`,
      `${'k'.repeat(65)}=v`,
      `k=${'v'.repeat(129)}`,
      'k=',
      'k',
      '=v',
      '9k=v',
      'k=a b',
      'k=é',
      'k=1,k=2',
      'a=1,,b=2',
      'a=1,',
      `a=${'v'.repeat(128)},`.repeat(16),
    ]) {
      const { param, message } = refusal(() => parseTags(header));
      expect(param, header).toBe('svc-tags');
      expect(message).toMatch(/^svc-tags: /);
    }
    expect(refusal(() => parseTags('a=b'.padEnd(2049, ' '))).message).toContain('2048 bytes');
  });
});

describe('checkMetadata', () => {
  it('keeps up to 16 keys of 64 characters with values of 256, empty values included', () => {
    const sixteen = Object.fromEntries(
      Array.from({ length: 16 }, (_, index) => [`k.${index}`, 'v'.repeat(256)]),
    );
    expect(checkMetadata(sixteen)).toEqual(sixteen);
    expect(checkMetadata({ empty: '' })).toEqual({ empty: '' });
    expect(checkMetadata(undefined)).toBeUndefined();
  });

  it('names the field of every problem', () => {
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    expect(refusal(() => checkMetadata(seventeen)).param).toBe('metadata');
    expect(refusal(() => checkMetadata(null)).param).toBe('metadata');
    expect(refusal(() => checkMetadata(['a'])).param).toBe('metadata');
    expect(refusal(() => checkMetadata({ team: 'x'.repeat(257) })).param).toBe('metadata.team');
    expect(refusal(() => checkMetadata({ team: 'tab\there' })).param).toBe('metadata.team');
    expect(refusal(() => checkMetadata({ team: 'del\u007f' })).param).toBe('metadata.team');
    expect(refusal(() => checkMetadata({ team: 1 })).param).toBe('metadata.team');
    expect(refusal(() => checkMetadata({ _team: 'x' })).param).toBe('metadata._team');
    expect(refusal(() => checkMetadata({ '': 'x' })).param).toBe('metadata.');
  });
});

describe('attributeFilters', () => {
  it('collects one family of filters and refuses a repeated or bad one', () => {
    expect(attributeFilters({ 'tag.team': 'a', 'metadata.x': 'y', limit: '5' }, 'tag')).toEqual({
      team: 'a',
    });
    expect(attributeFilters({ limit: '5' }, 'metadata')).toBeUndefined();
    expect(attributeFilters({ 'metadata.note': 'has spaces' }, 'metadata')).toEqual({ note: 'has spaces' });
    expect(refusal(() => attributeFilters({ 'tag.team': ['a', 'b'] }, 'tag')).param).toBe('tag.team');
    expect(refusal(() => attributeFilters({ 'tag.team': 'a b' }, 'tag')).param).toBe('tag.team');
    expect(refusal(() => attributeFilters({ 'tag.9': 'a' }, 'tag')).param).toBe('tag.9');
  });
});
