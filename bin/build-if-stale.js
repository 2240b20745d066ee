#!/usr/bin/env node
'use strict';
// Builds the server (tsc) and the admin console (vite) only when their sources changed since the last
// build, so `npm start` after the first start is ready in about a second instead of rebuilding both.
// A build's stamp file records the newest source time and the number of source files it saw.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

const TARGETS = [
  {
    name: 'server',
    inputs: ['server', 'jobs', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    output: 'dist/server/cli/main.js',
    stamp: 'dist/.build-stamp',
    script: 'build:server',
  },
  {
    name: 'admin console',
    inputs: ['admin-ui/src', 'admin-ui/index.html', 'admin-ui/vite.config.ts', 'admin-ui/tsconfig.json', 'admin-ui/package.json', 'package-lock.json'],
    output: 'admin-ui/dist/index.html',
    stamp: 'admin-ui/dist/.build-stamp',
    script: 'build:admin',
  },
];

/** Newest modification time and number of files under the inputs (node_modules and dist left out). */
function scan(inputs) {
  let newest = 0;
  let files = 0;
  const visit = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p)) if (name !== 'node_modules' && name !== 'dist') visit(path.join(p, name));
    } else {
      files++;
      newest = Math.max(newest, st.mtimeMs);
    }
  };
  for (const input of inputs) visit(path.join(ROOT, input));
  return `${newest} ${files}`;
}

/**
 * Builds each target whose sources changed since its last build; exits the process when a build fails.
 * `only`: the names of the targets to look at (e.g. ['server']); all by default.
 */
function buildIfStale(quiet, only) {
  for (const target of TARGETS) {
    if (only && !only.includes(target.name)) continue;
    const seen = scan(target.inputs);
    const stampFile = path.join(ROOT, target.stamp);
    let stamp = null;
    try {
      stamp = fs.readFileSync(stampFile, 'utf8').trim();
    } catch {
      // never built here
    }
    if (stamp === seen && fs.existsSync(path.join(ROOT, target.output))) {
      if (!quiet) console.log(`muninn: ${target.name} is up to date`);
      continue;
    }
    console.log(`muninn: building the ${target.name}…`);
    const run = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', target.script], { cwd: ROOT, stdio: 'inherit' });
    if (run.status !== 0) {
      console.error(`muninn: building the ${target.name} failed (npm run ${target.script}).`);
      process.exit(run.status ?? 1);
    }
    fs.mkdirSync(path.dirname(stampFile), { recursive: true });
    fs.writeFileSync(stampFile, seen + '\n');
  }
}

module.exports = { buildIfStale };
if (require.main === module) buildIfStale(process.argv.includes('--quiet'));
