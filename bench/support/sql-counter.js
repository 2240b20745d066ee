// Preloaded into a bench server (`node -r`): counts the SQLite statements it runs, by statement text with
// numbers folded to N, and writes the counts as JSON to $MUNINN_SQL_COUNT_FILE every 200 ms, so a bench
// can tell how many statements (and which) a turn costs. Measurement only; never loaded by the product.
'use strict';
const fs = require('node:fs');
const Database = require('better-sqlite3');

const counts = new Map();
// With $MUNINN_SQL_COUNT_STACKS set, each statement is keyed with the first frames of project code that ran it.
const stacks = Boolean(process.env.MUNINN_SQL_COUNT_STACKS);
Error.stackTraceLimit = stacks ? 40 : Error.stackTraceLimit;
const caller = () =>
  (new Error().stack ?? '')
    .split('\n')
    .filter((l) => /\/(server|jobs)\//.test(l) && !l.includes('node_modules'))
    .slice(0, 4)
    .map((l) => l.trim().replace(/^at /, '').replace(/\(.*\/(server|jobs)\//, '($1/'))
    .join(' < ');
// The folded text of each statement, computed once: the counting should cost the server next to nothing.
const folded = new Map();
const fold = (sql) => {
  let text = folded.get(sql);
  if (text === undefined) folded.set(sql, (text = String(sql).replace(/\s+/g, ' ').replace(/\d+/g, 'N').slice(0, stacks ? 60 : 240)));
  return text;
};
const count = (sql) => {
  const key = fold(sql) + (stacks ? ` @ ${caller()}` : '');
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
const probe = new Database(':memory:');
const Statement = probe.prepare('SELECT 1').constructor;
probe.close();
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = Statement.prototype[method];
  Statement.prototype[method] = function counted(...args) {
    count(this.source);
    return original.apply(this, args);
  };
}
const exec = Database.prototype.exec;
Database.prototype.exec = function counted(sql) {
  count(sql);
  return exec.call(this, sql);
};
const file = process.env.MUNINN_SQL_COUNT_FILE;
if (file) {
  const write = () => {
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify([...counts.entries()]));
    fs.renameSync(tmp, file);
  };
  setInterval(write, 200).unref();
  process.on('exit', write);
}
