import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// Random bytes are drawn 4 KiB at a time and handed out 8 per id (one call into the CSPRNG per 512 ids).
const POOL = Buffer.alloc(4096);
let poolAt = POOL.length;

function random8(): Buffer {
  if (poolAt + 8 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  poolAt += 8;
  return POOL.subarray(poolAt - 8, poolAt);
}

/**
 * A UUIDv7 string: time-ordered, so sorting by id sorts by creation time. Within one millisecond a
 * 12-bit counter keeps ids of this process increasing.
 */
export function newId(now: number = Date.now()): string {
  if (now <= lastMs) {
    seq += 1;
    if (seq > 0xfff) {
      lastMs += 1;
      seq = 0;
    }
  } else {
    lastMs = now;
    seq = 0;
  }
  const ms = lastMs;
  const rand = random8();
  const hex = ms.toString(16).padStart(12, '0');
  const verSeq = (0x7000 | seq).toString(16);
  const variant = ((rand[0]! & 0x3f) | 0x80).toString(16).padStart(2, '0');
  const tail = rand.subarray(1).toString('hex').slice(0, 14);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${verSeq}-${variant}${tail.slice(0, 2)}-${tail.slice(2, 14)}`;
}
