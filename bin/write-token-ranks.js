#!/usr/bin/env node
'use strict';
// Third step of `npm run build:server`, after tsc and the bundle: writes gpt-tokenizer's o200k ranks as
// JSON next to the compiled ranks loader (dist/server/common/o200k_base.ranks.json), with the package's
// version, so the server parses them instead of compiling the package's 2.4 MB array literal at the first token count
// (about half the resident memory it adds; see server/common/token-ranks.ts).
const fs = require('node:fs');
const path = require('node:path');

const OUT_DIR = path.join(__dirname, '..', 'dist', 'server', 'common');
const RANKS_FILE = 'o200k_base.ranks.json';

/** Writes the ranks file into `dir` and returns its path. */
function writeTokenRanks(dir = OUT_DIR) {
  const ranks = require('gpt-tokenizer/cjs/bpeRanks/o200k_base').default;
  const { version } = require('gpt-tokenizer/package.json');
  const file = path.join(dir, RANKS_FILE);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ gptTokenizer: version, ranks }));
  fs.renameSync(tmp, file);
  return file;
}

module.exports = { writeTokenRanks, RANKS_FILE };
if (require.main === module) writeTokenRanks();
