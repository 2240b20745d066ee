import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Redis } from 'ioredis';
import { luaScript } from '../../../server/redis/lua-script';

/** A private redis-server: the test flushes its script cache, which must not touch other tests' Redis. */
async function startRedis(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  // Ready once it accepts connections.
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, proc };
}

describe('luaScript', () => {
  let server: { url: string; proc: ChildProcess };
  let redis: Redis;
  let monitor: Redis;
  const commands: string[] = [];

  beforeAll(async () => {
    server = await startRedis();
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
    const exited = new Promise((r) => server.proc.once('exit', r));
    server.proc.kill();
    await exited;
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
