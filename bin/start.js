#!/usr/bin/env node
'use strict';
// `npm start` / `npm run muninn -- <verb>`: builds what changed (bin/build-if-stale.js), then runs the CLI in
// this same process, so the signal npm forwards on a stop (SIGTERM from systemd or docker, SIGINT) reaches
// the server itself instead of a shell between them. `--quiet` leaves out the "up to date" lines.
const path = require('node:path');
const { buildIfStale } = require('./build-if-stale.js');

const args = process.argv.slice(2);
const quiet = args[0] === '--quiet';
if (quiet) args.shift();
buildIfStale(quiet);
process.argv = [process.argv[0], path.join(__dirname, 'muninn.js'), ...args];
require('./muninn.js');
