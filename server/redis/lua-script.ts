import type { Redis } from 'ioredis';

export type LuaScript = (redis: Redis, keys: string[], args: Array<string | number>) => Promise<unknown>;

/**
 * A Lua script run by its SHA1 (EVALSHA): the body goes to Redis once per connection instead of with every
 * call, and is sent again by ioredis if Redis answers NOSCRIPT (after a restart or SCRIPT FLUSH).
 */
export function luaScript(name: string, numberOfKeys: number, lua: string): LuaScript {
  const command = `muninn_${name}`;
  return (redis, keys, args) => {
    if (keys.length !== numberOfKeys) throw new Error(`script ${name} takes ${numberOfKeys} keys, got ${keys.length}`);
    const commands = redis as unknown as Record<string, ((...a: Array<string | number>) => Promise<unknown>) | undefined>;
    if (!commands[command]) redis.defineCommand(command, { numberOfKeys, lua });
    return commands[command]!(...keys, ...args);
  };
}
