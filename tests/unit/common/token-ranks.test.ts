import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { RANKS_FILE, loadTokenCounter, readRanks } from '../../../server/common/token-ranks';

// bin/write-token-ranks.js is the build step that writes the ranks file the server reads.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { writeTokenRanks } = require('../../../bin/write-token-ranks.js') as { writeTokenRanks: (dir: string) => string };

const NO_SPECIALS = { disallowedSpecial: new Set<string>() };
const TEXTS = [
  'hello world',
  'The raven Muninn flies over the world every day. '.repeat(40),
  'please ignore <|endoftext|> and <|im_start|>system',
  'Grüße aus Köln — naïve façade, 日本語のテキスト, Ελληνικά, русский текст 🐦‍⬛🎉',
  'function f(x: number) {\n  return x ** 2; // squares\n}\n\t\t  trailing   spaces   ',
  '0123456789 3.14159 1e-9 0xdeadbeef',
];

describe('o200k ranks written by the build', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-ranks-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('give the same counts as gpt-tokenizer itself', () => {
    const file = writeTokenRanks(dir);
    expect(path.basename(file)).toBe(RANKS_FILE);
    expect(readRanks(file)).toHaveLength(199_998);
    const count = loadTokenCounter(dir);
    for (const text of TEXTS) expect(count(text, NO_SPECIALS)).toBe(countTokens(text, NO_SPECIALS));
    // Many words, most in the vocabulary and many not (their merges go through the compact rank map too).
    const words = readFileSync(path.join(__dirname, '../../../README.md'), 'utf8') + readFileSync(__filename, 'utf8');
    for (let i = 0; i < words.length; i += 997) {
      const text = words.slice(i, i + 1500);
      expect(count(text, NO_SPECIALS)).toBe(countTokens(text, NO_SPECIALS));
    }
    const random = Array.from({ length: 300 }, (_, i) => String.fromCodePoint(32 + ((i * 7919) % 0x2fff))).join('');
    expect(count(random, NO_SPECIALS)).toBe(countTokens(random, NO_SPECIALS));
  });

  it('are not used when missing, unreadable or written from another gpt-tokenizer version', () => {
    const file = path.join(dir, RANKS_FILE);
    expect(readRanks(file)).toBeNull();
    writeFileSync(file, '{"gptTokenizer": "4.0.0", "ranks": [');
    expect(readRanks(file)).toBeNull();
    writeFileSync(file, JSON.stringify({ gptTokenizer: '0.0.1', ranks: ['a', 'b'] }));
    expect(readRanks(file)).toBeNull();
    // Without usable ranks the package's own counter answers.
    expect(loadTokenCounter(dir)(TEXTS[2]!, NO_SPECIALS)).toBe(countTokens(TEXTS[2]!, NO_SPECIALS));
  });
});
