import { Redis } from 'ioredis';
import { luaScript } from '../../../server/redis/lua-script';
import { startPrivateRedis, type PrivateRedis } from '../../support/private-redis';

describe('luaScript', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let monitor: Redis;
  const commands: string[] = [];

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    // monitor() opens a connection of its own in MONITOR mode.
    monitor = await redis.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(String(args[0]).toUpperCase()));
  });
  afterAll(async () => {
    await new Promise((r) => {
      monitor.once('end', r);
      monitor.disconnect();
    });
    await redis.quit();
    await server.stop();
  });

  const incrBy = luaScript('test_incr_by', 1, `return redis.call('INCRBY', KEYS[1], ARGV[1])`);

  it('runs the script by its SHA1 after the first call, and again after Redis forgot it', async () => {
    expect(await incrBy(redis, ['n'], [2])).toBe(2);
    expect(await incrBy(redis, ['n'], [3])).toBe(5);
    await redis.script('FLUSH');
    // NOSCRIPT: the body is sent once more and the call still succeeds.
    expect(await incrBy(redis, ['n'], [4])).toBe(9);
    // Later calls send only the SHA1.
    await new Promise((r) => setTimeout(r, 100));
    commands.length = 0;
    for (let i = 0; i < 5; i++) await incrBy(redis, ['n'], [1]);
    expect(await redis.get('n')).toBe('14');
    await new Promise((r) => setTimeout(r, 100));
    expect(commands.filter((c) => c === 'EVAL' || c === 'EVALSHA')).toEqual([
      'EVALSHA',
      'EVALSHA',
      'EVALSHA',
      'EVALSHA',
      'EVALSHA',
    ]);
  });

  it('refuses a call with the wrong number of keys', () => {
    expect(() => incrBy(redis, ['a', 'b'], [1])).toThrow('takes 1 keys, got 2');
  });
});
