import ipaddr from 'ipaddr.js';
import { embeddedIPv4, isBlockedHostname, isPublicAddress, matchesDomain } from '../../../server/modules/tools';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.0.1',
    '169.254.169.254',
    '169.254.1.1',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.251',
    '239.1.1.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '2002:a00:1::',
    '2001:db8::1',
    // IPv4-compatible (::a.b.c.d is ::7f00:1 once canonical), IPv4-translated, NAT64, 6to4, Teredo: refused whatever they embed
    '::127.0.0.1',
    '::7f00:1',
    '0:0:0:0:0:0:7f00:1',
    '::a00:1',
    '::a9fe:a9fe',
    '::8.8.8.8',
    '::808:808',
    '::ffff:0:7f00:1',
    '::ffff:0:808:808',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::7f00:1',
    '64:ff9b::808:808',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '::2',
    'fe80::1%eth0',
    '010.0.0.1',
    'not an ip',
    '',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address, 80)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isPublicAddress(address, 443)).toBe(true);
    },
  );
});

describe('embeddedIPv4', () => {
  it.each([
    ['::7f00:1', '127.0.0.1'],
    ['::ffff:a00:1', '10.0.0.1'],
    ['::ffff:0:c0a8:101', '192.168.1.1'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['2002:c0a8:101::1', '192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1'],
  ])('finds the IPv4 inside %s', (v6, v4) => {
    expect(embeddedIPv4(ipaddr.IPv6.parse(v6))?.toString()).toBe(v4);
  });

  it.each(['::', '::1', '2606:4700::1111', 'fe80::1'])('finds none in %s', (v6) => {
    expect(embeddedIPv4(ipaddr.IPv6.parse(v6))).toBeNull();
  });
});

describe('host names', () => {
  it('blocks metadata and localhost names', () => {
    expect(isBlockedHostname('metadata.google.internal')).toBe(true);
    expect(isBlockedHostname('METADATA.GOOGLE.INTERNAL.')).toBe(true);
    expect(isBlockedHostname('localhost')).toBe(true);
    expect(isBlockedHostname('foo.localhost')).toBe(true);
    expect(isBlockedHostname('example.com')).toBe(false);
  });

  it('matches domains and their subdomains only', () => {
    expect(matchesDomain('example.com', 'example.com')).toBe(true);
    expect(matchesDomain('api.example.com', 'example.com')).toBe(true);
    expect(matchesDomain('API.Example.com.', 'example.com')).toBe(true);
    expect(matchesDomain('api.example.com', '*.example.com')).toBe(true);
    expect(matchesDomain('badexample.com', 'example.com')).toBe(false);
    expect(matchesDomain('example.com.evil.net', 'example.com')).toBe(false);
    expect(matchesDomain('example.com', '')).toBe(false);
  });
});
