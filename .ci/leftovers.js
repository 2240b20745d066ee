#!/usr/bin/env node
// The test suites must leave no process behind: `snapshot FILE` records the processes of the kinds the
// tests start (redis-server, muninn servers, browsers, audio tools, MCP servers); `check FILE` waits a few
// seconds for stragglers, then lists those of the same kinds that were not in the snapshot and prints
// "1 passed, 0 failed" or "0 passed, 1 failed" as its last line (CI counts it as one test).
'use strict';
const fs = require('node:fs');

const KINDS = /(^|\/)(redis-server|chromium|chrome|chrome_crashpad_handler|espeak-ng|ffmpeg|ffprobe)(\s|$)|bin\/muninn\.js|\bmcp-server|server-(everything|filesystem|memory)/;

function processes() {
  const out = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      const state = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmd && state !== 'Z' && KINDS.test(cmd)) out.set(entry, cmd);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const [mode, file] = process.argv.slice(2);
if (mode === 'snapshot') {
  fs.writeFileSync(file, JSON.stringify([...processes().keys()]));
} else if (mode === 'check') {
  const before = new Set(JSON.parse(fs.readFileSync(file, 'utf8')));
  const fresh = () => [...processes()].filter(([pid]) => !before.has(pid));
  const deadline = Date.now() + 10_000;
  let left = fresh();
  while (left.length && Date.now() < deadline) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    left = fresh();
  }
  if (left.length) {
    console.log(`processes left behind by the test run (${left.length}):`);
    for (const [pid, cmd] of left.slice(0, 30)) console.log(`  ${pid} ${cmd.slice(0, 200)}`);
    console.log('0 passed, 1 failed');
  } else {
    console.log('no process left behind by the test run');
    console.log('1 passed, 0 failed');
  }
} else {
  console.error('usage: leftovers.js snapshot|check FILE');
  process.exit(2);
}
