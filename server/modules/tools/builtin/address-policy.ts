import { lookup as dnsLookup } from 'node:dns/promises';
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
 * broadcast, reserved and documentation ranges, IPv6 transition ranges that embed IPv4 (6to4, Teredo,
 * NAT64) and cloud metadata addresses. IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address.
 */
export const isPublicAddress: AddressPolicy = (address) => {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 becomes IPv4
  if (METADATA_ADDRESSES.has(ip.toNormalizedString()) || METADATA_ADDRESSES.has(ip.toString())) return false;
  return ip.range() === 'unicast';
};

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
