import { isBlockedHostname, isPublicAddress, matchesDomain } from '../../../server/modules/tools';

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
