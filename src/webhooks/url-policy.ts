/**
 * Which URLs a webhook endpoint may have, and which addresses a delivery may connect to.
 *
 * At creation (checkEndpointUrl): http or https only, no user name or password, no fragment, at
 * most MAX_URL_LENGTH characters, and the host must resolve. Unless
 * webhooks.allow_private_networks is true, every address the host resolves to must be public:
 * loopback, private (RFC 1918, IPv6 unique local), link-local, CGNAT (100.64/10), multicast,
 * unspecified, broadcast, reserved and documentation ranges are refused, and so are IPv6 forms
 * that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) when the embedded address is one of those.
 *
 * At delivery (resolvePublicAddress): the host is resolved again and the address is checked again
 * (a DNS answer that changed to an internal address after creation is refused: DNS rebinding);
 * the connection goes to exactly that checked address (webhooks/delivery-client.ts).
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { GatewayError } from '../errors/gateway-error.js';

export const MAX_URL_LENGTH = 2048;

const INTERNAL_V4: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const INTERNAL_V6: ReadonlyArray<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const internal = new BlockList();
for (const [network, prefix] of INTERNAL_V4) internal.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of INTERNAL_V6) internal.addSubnet(network, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address in any textual form node accepts. */
function ipv6Bytes(address: string): Buffer | undefined {
  const zoneless = address.split('%')[0]!;
  let text = zoneless;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tailBytes: number[] = [];
  if (tail) {
    tailBytes = tail[1]!.split('.').map(Number);
    text = `${text.slice(0, -tail[1]!.length)}0:0`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - headGroups.length - restGroups.length;
  if (missing < 0 || (rest === undefined && missing !== 0)) return undefined;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  const bytes = Buffer.alloc(16);
  for (const [index, group] of groups.entries())
    bytes.writeUInt16BE(Number.parseInt(group || '0', 16) & 0xffff, index * 2);
  if (tail) Buffer.from(tailBytes).copy(bytes, 12);
  return bytes;
}

const v4 = (bytes: Buffer, offset: number) =>
  `${bytes[offset]}.${bytes[offset + 1]}.${bytes[offset + 2]}.${bytes[offset + 3]}`;

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) return undefined;
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(bytes, 12); // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 16)) return v4(bytes, 12); // ::a.b.c.d (deprecated compatible)
  if (bytes.readUInt32BE(0) === 0x0064ff9b && zeros(4, 12)) return v4(bytes, 12); // 64:ff9b::/96
  if (bytes.readUInt16BE(0) === 0x2002) return v4(bytes, 2); // 6to4
  return undefined;
}

/** True when `address` (a literal IPv4 or IPv6 address) is not a public unicast address. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return internal.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined) return internal.check(embedded, 'ipv4');
  return internal.check(address.split('%')[0]!, 'ipv6');
}

const refuse = (reason: string) =>
  new GatewayError('invalid_webhook_url', `url: ${reason}`, { param: 'url' });

/** The URL's syntax rules (no DNS): returns the parsed URL or throws invalid_webhook_url naming `url`. */
export function parseEndpointUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH) throw refuse(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must use http or https');
  if (url.username !== '' || url.password !== '') throw refuse('must not contain a user name or password');
  if (url.hash !== '' || text.includes('#')) throw refuse('must not contain a fragment (#...)');
  if (url.hostname === '') throw refuse('must name a host');
  return url;
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Every address `host` resolves to (a literal address resolves to itself). */
async function addressesOf(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/**
 * The address a delivery to `host` connects to: resolved now, every answer checked; throws an
 * Error naming the refused address (the delivery is retried: DNS may change back).
 */
export async function resolvePublicAddress(host: string, allowPrivate: boolean): Promise<string> {
  const addresses = await addressesOf(host);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) {
    const blocked = addresses.find(isInternalAddress);
    if (blocked !== undefined)
      throw new AddressRefusedError(`${host} resolves to ${blocked}, an internal address`);
  }
  return addresses[0]!;
}

export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
}

/** The creation-time check: syntax, resolution, and the address rules above. */
export async function checkEndpointUrl(text: string, allowPrivate: boolean): Promise<URL> {
  const url = parseEndpointUrl(text);
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = await addressesOf(host);
  } catch {
    throw refuse(`host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw refuse(`host ${host} does not resolve`);
  if (!allowPrivate) {
    const blocked = addresses.find(isInternalAddress);
    if (blocked !== undefined)
      throw refuse(
        `${host} resolves to ${blocked}, a loopback, private, link-local or otherwise internal address (allowed only with webhooks.allow_private_networks: true)`,
      );
  }
  return url;
}
