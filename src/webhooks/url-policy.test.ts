/** The address rules of webhook URLs (url-policy.ts) and the backoff schedule (backoff.ts). */
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './backoff.js';
import { embeddedIpv4, isInternalAddress, parseEndpointUrl } from './url-policy.js';

describe('webhook URL rules', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1%eth0',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
    '::127.0.0.1',
  ])('refuses %s', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
  ])('allows %s', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });

  it('reads the IPv4 address an IPv6 address embeds', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('64:ff9b::808:808')).toBe('8.8.8.8');
    expect(embeddedIpv4('2002:c0a8:0101::1')).toBe('192.168.1.1');
    expect(embeddedIpv4('2606:4700:4700::1111')).toBeUndefined();
  });

  it('names url in every syntax refusal', () => {
    for (const url of ['ftp://a.example/x', 'http://u:p@a.example/', 'http://a.example/#x', 'relative/path'])
      expect(() => parseEndpointUrl(url)).toThrow(/^url: /);
    expect(parseEndpointUrl('https://a.example/hook?x=1').hostname).toBe('a.example');
  });
});

describe('retry backoff', () => {
  it('waits within [0, min(cap, base x 2^(n-1))] with full jitter', () => {
    const settings = { baseMs: 10_000, capMs: 3_600_000 };
    expect(retryDelayMs(1, settings, () => 0.999_999)).toBe(9_999);
    expect(retryDelayMs(3, settings, () => 0.5)).toBe(20_000);
    expect(retryDelayMs(30, settings, () => 0.999_999)).toBe(3_599_996);
    expect(retryDelayMs(5, settings, () => 0)).toBe(0);
  });
});
