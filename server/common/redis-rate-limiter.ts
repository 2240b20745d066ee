import type * as Flexible from 'rate-limiter-flexible';

// rate-limiter-flexible's index requires every back-end it has (Mongo, MySQL, Postgres, Dynamo, Etcd, …:
// 36 modules, ≈ 45 ms of CPU at each start); the server uses the Redis one only, so it is required by its
// own path (9 modules, ≈ 10 ms). The types are the package's.

/* eslint-disable @typescript-eslint/no-require-imports */
export const RateLimiterRedis = require('rate-limiter-flexible/lib/RateLimiterRedis') as typeof Flexible.RateLimiterRedis;
export type RateLimiterRedis = Flexible.RateLimiterRedis;
export const RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes') as typeof Flexible.RateLimiterRes;
export type RateLimiterRes = Flexible.RateLimiterRes;
/* eslint-enable @typescript-eslint/no-require-imports */
