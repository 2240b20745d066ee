import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { countTokens as CountTokens } from 'gpt-tokenizer';
import { CompactRankMap } from './compact-rank-map';

// === The o200k byte-pair ranks as JSON
// gpt-tokenizer ships its ranks as a 2.4 MB JavaScript array literal. Compiling it leaves ≈ 60 MiB more
// resident memory in the process and costs ≈ 0.5 s of CPU at the first count; parsing the same array from
// JSON leaves ≈ 30 MiB and costs ≈ 0.4 s. `npm run build:server` writes the JSON next to the compiled
// module (bin/write-token-ranks.js); without it (the TypeScript sources, tests) the package's own module
// is used. The counts are the same either way: the same ranks go into the same encoder.

/** File name of the ranks written by the build, next to the compiled module. */
export const RANKS_FILE = 'o200k_base.ranks.json';

type Ranks = (string | number[])[];

/** Version of the installed gpt-tokenizer, which the ranks file must have been written from. */
function tokenizerVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('gpt-tokenizer/package.json') as { version: string }).version;
}

/** The ranks in `file` when it was written from the installed gpt-tokenizer; null when missing or stale. */
export function readRanks(file: string): Ranks | null {
  let parsed: { gptTokenizer?: unknown; ranks?: unknown };
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as typeof parsed;
  } catch {
    return null;
  }
  if (parsed.gptTokenizer !== tokenizerVersion() || !Array.isArray(parsed.ranks)) return null;
  return parsed.ranks as Ranks;
}

/** Most words outside the vocabulary whose merges a counter remembers (gpt-tokenizer's default is 100,000). */
const MERGE_CACHE_SIZE = 20_000;

/** The parts of gpt-tokenizer's byte-pair core a counter swaps (see counterFromRanks). */
interface EncodingCore {
  bytePairStringRankEncoder: { get(key: string): number | undefined };
  bytePairRankDecoder: unknown[];
}

/**
 * o200k `countTokens` over `ranks` (gpt-tokenizer checks their number against the vocabulary size). Once
 * the encoding is built, its string → rank Map moves into a CompactRankMap and the rank → string table
 * (used only to decode, which a counter never does) is dropped: ≈ 30 MiB less live heap, same counts.
 */
export function counterFromRanks(ranks: Ranks): typeof CountTokens {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as typeof import('gpt-tokenizer/GptEncoding');
  const encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks);
  const core = (encoding as unknown as { bytePairEncodingCoreProcessor?: EncodingCore }).bytePairEncodingCoreProcessor;
  if (core?.bytePairStringRankEncoder instanceof Map && Array.isArray(core.bytePairRankDecoder)) {
    core.bytePairStringRankEncoder = new CompactRankMap(core.bytePairStringRankEncoder as Map<string, number>);
    core.bytePairRankDecoder = [];
  }
  encoding.setMergeCacheSize(MERGE_CACHE_SIZE);
  return encoding.countTokens;
}

/** The o200k counter: from the built ranks file in `dir` when it is there and current, else the package's own. */
export function loadTokenCounter(dir: string = __dirname): typeof CountTokens {
  const ranks = readRanks(path.join(dir, RANKS_FILE));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return ranks ? counterFromRanks(ranks) : (require('gpt-tokenizer') as { countTokens: typeof CountTokens }).countTokens;
}
