import { metricsAccess } from '../../../server/metrics';

describe('who may scrape /metrics', () => {
  it('without a token: loopback clients only (IPv4, IPv6, IPv4-mapped)', () => {
    const access = metricsAccess(null);
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.3.2.1']) expect(access.check(undefined, local)).toBeNull();
    for (const remote of ['10.0.0.5', '::ffff:192.168.1.2', '2001:db8::1', undefined]) {
      expect(access.check(undefined, remote)).toEqual({ status: 403, message: expect.stringContaining('metrics.token') });
    }
  });

  it('with a token: its bearer only, from anywhere (loopback gets no exception)', () => {
    const access = metricsAccess('s3cret');
    expect(access.check('Bearer s3cret', '10.0.0.5')).toBeNull();
    expect(access.check('bearer s3cret', '10.0.0.5')).toBeNull();
    expect(access.check('Bearer s3cre', '127.0.0.1')?.status).toBe(401);
    expect(access.check('Bearer s3cret-longer', '10.0.0.5')?.status).toBe(401);
    expect(access.check(undefined, '127.0.0.1')?.status).toBe(401);
  });
});
