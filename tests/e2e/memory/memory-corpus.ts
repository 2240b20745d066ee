import { newId } from '../../../server/common/ids';
import { Memory, MemoryScope, MemoryType } from '../../../server/modules/memory';
import type { TestApp } from '../../support/test-app';

/** Deterministic PRNG (mulberry32), so a failing corpus can be reproduced. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUBJECTS = ['Alice', 'her sister', 'the landlord', 'her manager', 'the dentist', 'the neighbour', 'her son', 'the book club', 'the plumber', 'her cousin'];
const VERBS = ['prefers', 'mentioned', 'booked', 'forgot', 'recommended', 'ordered', 'cancelled', 'asked about', 'bought', 'is planning'];
const OBJECTS = [
  'a table at the Italian place', 'oat milk in coffee', 'the train to Hamburg', 'a new winter jacket', 'tickets for the jazz concert',
  'the quarterly report', 'a standing desk', 'the blue umbrella', 'a trip to Lisbon', 'the yoga class on Tuesdays', 'sourdough starter',
  'the electricity bill', 'a second monitor', 'the dog food delivery', 'piano lessons', 'a birthday cake', 'the car insurance renewal',
  'a vegetarian cookbook', 'the team offsite', 'running shoes',
];
const WHEN = ['on Monday', 'last week', 'in March', 'every morning', 'before the holidays', 'after work', 'at the weekend', 'tomorrow', 'in autumn', 'twice a month'];
/** Near misses: share some words of the exact fact, never all of them. */
const NEAR_MISSES = [
  'The gym opens at six on weekdays.',
  'The office locker next to the kitchen is broken.',
  'The door code for the garage is 1234.',
  "Alice's bike locker at the station is number 12.",
  'The wifi code at the gym is sweat2024.',
  'Her gym membership renews in May.',
  'The locker room at the pool smells of chlorine.',
  'The promo code for the shoe shop is SPRING10.',
  'Alice keeps a spare key in the gym bag.',
  'The post office locker code arrives by SMS.',
];

function sentence(rand: () => number, i: number): string {
  if (i % 50 === 0) return `${NEAR_MISSES[(i / 50) % NEAR_MISSES.length]} (note ${i})`;
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  return `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(WHEN)} (note ${i}).`;
}

/**
 * Writes `count` distractor memories of a user straight into the memories table, in one transaction
 * (multi-row inserts), then lets the memory layer index them (reconcile). Returns the seconds each took.
 */
export async function seedDistractors(t: TestApp, userId: string, count: number, seed = 42): Promise<{ insertS: number; indexS: number }> {
  const ctx = t.app.systemCtx('seed');
  const rand = prng(seed);
  const started = Date.now();
  const now = Date.now();
  const rows = Array.from({ length: count }, (_, i) => {
    const at = new Date(now - Math.floor(rand() * 365) * 86_400_000);
    return {
      id: newId(now - count + i),
      createdAt: at,
      updatedAt: at,
      type: i % 7 === 0 ? MemoryType.LESSON : MemoryType.FACT,
      scope: MemoryScope.USER,
      userId,
      groupId: null,
      content: sentence(rand, i),
      sourceSessionId: null,
      importance: 0.5,
      source: null,
    };
  });
  await t.app.db.withTransaction(ctx, async (tx) => {
    const repo = t.app.db.repo(tx, Memory);
    for (let i = 0; i < rows.length; i += 500) await repo.insert(rows.slice(i, i + 500));
  });
  const inserted = Date.now();
  await t.app.services.memory.indexer.reconcile(ctx);
  const timings = { insertS: (inserted - started) / 1000, indexS: (Date.now() - inserted) / 1000 };
  if (process.env.MEMORY_TIMINGS) console.log(`seeded ${count} memories: insert ${timings.insertS} s, index ${timings.indexS} s`);
  return timings;
}
