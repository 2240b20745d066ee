// `node bench/support/cpu-profile-summary.js <file.cpuprofile> [skipSeconds] [top]`: self time of a V8 CPU
// profile (from --cpu-prof) by package, by file and by function, leaving out the first skipSeconds (start
// up, set up). Measurement only; never loaded by the product.
'use strict';
const fs = require('node:fs');

const [file, skipArg, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: cpu-profile-summary.js <file.cpuprofile> [skipSeconds] [top]');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const skipUs = Number(skipArg ?? 0) * 1e6;
const top = Number(topArg ?? 30);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));

const selfUs = new Map();
let t = profile.startTime;
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  if (t - profile.startTime < skipUs) continue;
  const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i];
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  total += dt;
}

const where = (url) => {
  if (!url) return null;
  if (url.includes('node_modules/')) {
    const parts = url.split('node_modules/').pop().split('/');
    return { pkg: parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0], file: parts.join('/') };
  }
  if (url.startsWith('node:')) return { pkg: `node:${url.slice(5).split('/')[0]}`, file: url };
  const rel = url.replace(/^.*?\/((server|jobs|tests|bench)\/)/, '$1');
  return { pkg: 'app', file: rel };
};
const byPackage = new Map();
const byFile = new Map();
const byFunction = new Map();
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const w = where(url);
  const pkg = w ? w.pkg : `(${functionName || 'native'})`;
  add(byPackage, pkg, us);
  add(byFile, w ? w.file : pkg, us);
  add(byFunction, `${functionName || '(anonymous)'} ${w ? `${w.file}:${lineNumber + 1}` : ''}`, us);
}
const show = (title, m) => {
  console.log(`\n== ${title} (${(total / 1e6).toFixed(2)} s sampled)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  }
};
show('self time by package', byPackage);
show('self time by file', byFile);
show('self time by function', byFunction);
