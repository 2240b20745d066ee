#!/usr/bin/env node
'use strict';
// Runs the compiled CLI (npm run build writes dist/). main() resolves with the exit code; for `serve` it
// resolves once the server listens, and the server plus its signal handlers keep the process alive.
const path = require('node:path');
const fs = require('node:fs');
// Node 22.1 and later keep the compiled code of the modules on disk, so later starts skip compiling them.
require('node:module').enableCompileCache?.();
const entry = path.join(__dirname, '..', 'dist', 'server', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  console.error('muninn: the server is not built yet. Run "npm run build" (or "npm start") first.');
  process.exit(1);
}
require(bundleOf(entry) ?? entry)
  .main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(`muninn: ${err && err.message ? err.message : err}`);
      process.exitCode = 1;
    },
  );

/**
 * dist/muninn.bundle.js (bin/bundle-server.js: the same modules in one file, which loads faster) when it
 * was built from the current dist/ — not older than main.js, which every tsc run rewrites.
 */
function bundleOf(main) {
  const bundle = path.join(__dirname, '..', 'dist', 'muninn.bundle.js');
  try {
    return fs.statSync(bundle).mtimeMs >= fs.statSync(main).mtimeMs ? bundle : null;
  } catch {
    return null;
  }
}
