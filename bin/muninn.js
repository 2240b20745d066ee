#!/usr/bin/env node
'use strict';
// Runs the compiled CLI (npm run build writes dist/).
const path = require('node:path');
const fs = require('node:fs');
const entry = path.join(__dirname, '..', 'dist', 'server', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  console.error('muninn: the server is not built yet. Run "npm run build" (or "npm start") first.');
  process.exit(1);
}
require(entry).main();
