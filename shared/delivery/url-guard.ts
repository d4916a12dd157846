import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Webhook targets must be public HTTPS endpoints: a sender that posts wherever it is told
 * is an SSRF hole into the cloud account. The WHATWG URL parser first canonicalises every
 * IPv4 spelling (decimal, hex, octal, short forms), so the checks below see dotted quads.
 */
export interface GuardPolicy {
  /** Local development only: allow http:// and loopback targets. Never set in the cloud stack. */
  allowInsecureLocal: boolean;
}

export type GuardResult = { ok: true; url: URL } | { ok: false; reason: string };

/** All addresses of a name; throws (ENOTFOUND, …) when it does not resolve. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

const MAX_URL_LENGTH = 2048;

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (also Alibaba's metadata address)
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  forbidden.addSubnet(net, prefix, 'ipv4');
forbidden.addAddress('168.63.129.16', 'ipv4'); // Azure platform endpoint
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::', 96], // IPv4-compatible (deprecated)
  // Forms that embed an IPv4 address (which may be loopback or private) and reach it through a
  // translator or tunnel: refused whole, whatever they embed. None is a sane webhook target.
  ['::ffff:0:0:0', 96], // SIIT IPv4-translated, ::ffff:0:a.b.c.d (RFC 6052 / 2765)
  ['64:ff9b::', 96], // NAT64: reaches IPv4 space through a translator
  ['2001::', 32], // Teredo: embeds its server's and (obfuscated) client's IPv4
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local (incl. AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  forbidden.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4'); // also matches ::ffff:127.x.x.x
loopback.addAddress('::1', 'ipv6');

const FORBIDDEN_NAMES = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
];

/** Why an address may not be a webhook target, or null when it may. */
export function addressProblem(address: string, policy: GuardPolicy): string | null {
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(address, type)) return policy.allowInsecureLocal ? null : 'is a loopback address';
  if (forbidden.check(address, type)) return 'is a private, link-local, reserved or metadata address';
  return null;
}

const hostOf = (url: URL): string =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();

/** Everything that can be checked without DNS. */
export function checkUrlShape(raw: string, policy: GuardPolicy): GuardResult {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  const schemes = policy.allowInsecureLocal ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return { ok: false, reason: 'must use https://' };
  if (url.username || url.password) return { ok: false, reason: 'must not contain a user name or password' };
  // Port 0 is no port: connecting to it fails or reaches whatever the OS picks.
  if (url.port === '0') return { ok: false, reason: 'must not use port 0' };
  const host = hostOf(url);
  if (!host) return { ok: false, reason: 'must name a host' };
  if (isIP(host)) {
    const problem = addressProblem(host, policy);
    return problem ? { ok: false, reason: `host ${problem}` } : { ok: true, url };
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return policy.allowInsecureLocal ? { ok: true, url } : { ok: false, reason: 'must not target localhost' };
  }
  if (FORBIDDEN_NAMES.includes(host)) return { ok: false, reason: 'must not target a cloud metadata service' };
  return { ok: true, url };
}

/**
 * Shape, then DNS: every address the name resolves to must be allowed. At create/update a
 * name that does not resolve is accepted (DNS changes; test networks have none); before a
 * delivery (`unresolvable: 'refuse'`) it is a failed attempt.
 */
export async function checkUrl(
  raw: string,
  policy: GuardPolicy,
  resolve: Resolver = systemResolver,
  unresolvable: 'accept' | 'refuse' = 'accept',
): Promise<GuardResult> {
  const shape = checkUrlShape(raw, policy);
  if (!shape.ok) return shape;
  const host = hostOf(shape.url);
  if (isIP(host) || host === 'localhost' || host.endsWith('.localhost')) return shape;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return unresolvable === 'accept' ? shape : { ok: false, reason: `host ${host} does not resolve` };
  }
  for (const address of addresses) {
    const problem = addressProblem(address, policy);
    if (problem) return { ok: false, reason: `host ${host} resolves to ${address}, which ${problem}` };
  }
  return shape;
}
