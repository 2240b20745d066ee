import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Decides whether an outbound connection to `address` (an IP literal) on `port` is allowed. */
export type AddressPolicy = (address: string, port: number) => boolean;

/** Resolves a host name to every address it has (A and AAAA). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** Cloud metadata endpoints, refused even if a range check would ever let them through. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '169.254.170.2']);

/** Host names refused before any DNS lookup. */
const BLOCKED_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'localhost']);

/**
 * The default policy: only globally routable unicast addresses. Refuses loopback, RFC 1918 private,
 * link-local (169.254/16, fe80::/10), CGNAT (100.64/10), unique-local (fc00::/7), multicast, unspecified,
 * broadcast, reserved and documentation ranges and cloud metadata addresses. IPv6 is first brought to its
 * canonical form (::127.0.0.1 is ::7f00:1); IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as its IPv4
 * address, and every other form that embeds IPv4 (IPv4-compatible ::/96, IPv4-translated, NAT64, 6to4,
 * Teredo) is refused whatever it embeds: none of them is a real destination for this tool.
 */
export const isPublicAddress: AddressPolicy = (address) => {
  const ip = parseAddress(address);
  if (!ip) return false;
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isPublicAddress(v6.toIPv4Address().toString(), 0);
    if (embeddedIPv4(v6)) return false;
  }
  if (METADATA_ADDRESSES.has(ip.toNormalizedString()) || METADATA_ADDRESSES.has(ip.toString())) return false;
  return ip.range() === 'unicast';
};

/** Parses an IP literal the way the connection will use it; IPv6 is canonicalised by the URL parser first. */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const family = net.isIP(address);
  if (family === 4) return ipaddr.IPv4.isValidFourPartDecimal(address) ? ipaddr.IPv4.parse(address) : null;
  if (family !== 6) return null;
  let canonical: string;
  try {
    // The zone (fe80::1%eth0) is dropped: the address alone decides. The URL parser writes ::1.2.3.4 as ::102:304.
    canonical = new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  return ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : null;
}

/**
 * The IPv4 address embedded in an IPv6 address, or null when there is none: IPv4-compatible (::/96, not
 * :: or ::1), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96 and the
 * local-use 64:ff9b:1::/48, last 32 bits), 6to4 (2002::/16, bits 16–48) and Teredo (2001::/32, the client
 * address is the last 32 bits inverted).
 */
export function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts; // eight 16-bit groups
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!); // ::a.b.c.d
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!); // ::ffff:0:a.b.c.d
  if (p[0] === 0x64 && p[1] === 0xff9b && (zeros(2, 6) || p[2] === 1)) return v4(p[6]!, p[7]!); // NAT64
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!); // 6to4
  if (p[0] === 0x2001 && p[1] === 0) return v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff); // Teredo client
  return null;
}

/** Host names that are never fetched (metadata services, localhost and `*.localhost`). */
export function isBlockedHostname(hostname: string): boolean {
  const host = normalizeHostname(hostname);
  return BLOCKED_HOSTNAMES.has(host) || host.endsWith('.localhost');
}

/** Lowercase, without IPv6 brackets or a trailing dot. */
export function normalizeHostname(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** True when `hostname` is `domain` or one of its subdomains. */
export function matchesDomain(hostname: string, domain: string): boolean {
  const host = normalizeHostname(hostname);
  const d = normalizeHostname(domain.trim()).replace(/^\*\./, '');
  return d.length > 0 && (host === d || host.endsWith(`.${d}`));
}

/** The system resolver, every address, in resolver order. */
export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** An outbound connection the address policy refuses (a local, private or metadata target). */
export class AddressRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

/** An address an outbound connection may use, checked by the policy. */
export interface OutboundTarget {
  address: string;
  family: number;
}

/**
 * The SSRF guard of outbound HTTP (the `http_request` tool, images an API client names by URL): the host
 * must not be a local or metadata name, and every address it resolves to must pass `allowed` (a name
 * that resolves to a public and a private address is refused). Returns the address to connect to, which
 * the caller pins with {@link pinnedLookup} so a second lookup cannot swap it. Throws
 * `AddressRefusedError` when refused, a plain Error when the name does not resolve.
 */
export async function resolveAllowedTarget(url: URL, lookup: HostLookup, allowed: AddressPolicy): Promise<OutboundTarget> {
  const host = normalizeHostname(url.hostname);
  if (isBlockedHostname(host)) throw new AddressRefusedError(`${host} is a local or metadata host name`);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const family = net.isIP(host);
  let addresses: OutboundTarget[];
  if (family) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await lookup(host);
    } catch (err) {
      throw new Error(`could not resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!addresses.length) throw new Error(`${host} has no addresses`);
  }
  for (const a of addresses) {
    if (!allowed(a.address, port)) {
      throw new AddressRefusedError(family ? `${host} is not a public address` : `${host} resolves to ${a.address}, which is not a public address`);
    }
  }
  return addresses[0]!;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/** A `lookup` for http(s).request that always answers the already-checked address. */
export function pinnedLookup(target: OutboundTarget) {
  return (_hostname: string, opts: unknown, cb?: LookupCallback) => {
    const callback = (typeof opts === 'function' ? opts : cb) as LookupCallback;
    if (typeof opts === 'object' && opts !== null && (opts as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}
