// Lets `node` require the TypeScript sources with the same swc settings as jest, keeping each compiled file
// in node_modules/.cache/muninn-bench (keyed by a hash of its source), so a benchmark's server start measures
// the server, not the compiler.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const options = require('../../swc.options.js');

const cacheDir = path.join(__dirname, '../../node_modules/.cache/muninn-bench');
fs.mkdirSync(cacheDir, { recursive: true });
let swc = null;

require.extensions['.ts'] = function compile(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha1').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let code;
  try {
    code = fs.readFileSync(cached, 'utf8');
  } catch {
    swc ??= require('@swc/core');
    code = swc.transformSync(source, { ...options, filename }).code;
    const tmp = `${cached}.${process.pid}.${require('node:worker_threads').threadId}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  }
  module._compile(code, filename);
};
