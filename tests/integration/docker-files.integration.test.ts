import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

function dockerCompose(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v docker-compose'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** The `npm …` commands of the Dockerfile's RUN steps. */
function dockerfileNpmSteps(): string[] {
  return read('docker/Dockerfile')
    .split('\n')
    .filter((l) => l.startsWith('RUN npm '))
    .map((l) => l.slice('RUN '.length).replace(/ --no-audit --no-fund$/, ''));
}

describe('docker/', () => {
  it("the Dockerfile builds with the README's commands (npm ci, npm run build), one image for every role", () => {
    const steps = dockerfileNpmSteps();
    expect(steps).toEqual(['npm ci', 'npm run build', 'npm prune --omit=dev']);
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Running at scale'));
    expect(section.length).toBeLessThan(readme.length);
    // The install and build commands are the README's, in its quick start and in the scale-out section.
    expect(readme).toContain('npm ci && npm start');
    expect(section).toContain('npm ci && npm run build');
    // `npm start` runs the same build (`npm run build`, skipped when nothing changed) before serving.
    expect(read('package.json')).toContain('"start": "exec node bin/start.js serve"');
    expect(read('bin/start.js')).toContain("require('./build-if-stale.js')");
    expect(read('bin/build-if-stale.js')).toMatch(/\['run', '--silent', target\.script\]/);
    expect(read('docker/Dockerfile')).toMatch(/CMD \["serve", "--role", "all"\]/);
  });

  const bin = dockerCompose();
  if (bin || process.env.CI) {
    it('docker-compose accepts docker/compose.yml: postgres, redis (append-only), api ×1, worker ×2 with health checks', () => {
      expect(bin).not.toBeNull();
      const out = execFileSync(bin!, ['-f', 'docker/compose.yml', 'config'], { cwd: ROOT, encoding: 'utf8' });
      const services = [...out.matchAll(/^ {2}([a-z0-9-]+):$/gm)].map((m) => m[1]);
      expect(services).toEqual(expect.arrayContaining(['api', 'postgres', 'redis', 'worker-1', 'worker-2']));
      expect(out).toMatch(/- --appendonly\n\s+- ["']yes["']/);
      for (const name of ['api', 'worker-1', 'worker-2', 'postgres', 'redis']) {
        const start = out.indexOf(`\n  ${name}:\n`);
        const rest = out.slice(start + 1);
        const end = rest.search(/\n {2}[a-z0-9-]+:\n|\nvolumes:/);
        const text = rest.slice(0, end);
        expect(text).toContain('healthcheck:');
        if (name.startsWith('worker')) expect(text).toMatch(/- serve\n\s+- --role\n\s+- worker/);
        if (name === 'api') expect(text).toMatch(/- serve\n\s+- --role\n\s+- api/);
      }
    });
  }
});
