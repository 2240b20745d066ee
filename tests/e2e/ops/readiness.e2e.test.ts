/**
 * `/readyz` of a real `muninn serve` answers 200 only once its start-up work is done: the skills folder is
 * synced into `skills` and the managed beats into `beats` by then (polled from the moment the process
 * starts, with a skills folder large enough that the sync takes a while).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startServeProcess, type ServeProcess } from '../../support/serve-process';
import { GraphQLTestClient } from '../../support/graphql-client';
import { pidAlive } from '../../support/pid-alive';

jest.setTimeout(120_000);

const SKILLS = 150;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('/readyz waits for start-up work', () => {
  let dir: string;
  let server: ServeProcess | null = null;

  afterAll(async () => {
    await server?.kill('SIGTERM');
    const pidFile = path.join(dir, 'redis', 'redis.pid');
    try {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('is 503 until skills and managed beats are synced, then 200 with all of them there', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-readyz-'));
    const skillsDir = path.join(dir, 'skills');
    for (let i = 0; i < SKILLS; i++) {
      mkdirSync(path.join(skillsDir, `skill-${i}`), { recursive: true });
      writeFileSync(
        path.join(skillsDir, `skill-${i}`, 'SKILL.md'),
        `---\nname: skill-${i}\ndescription: Test skill number ${i}\nmin_trust: MEMBER\n---\n\n${'Steps to follow. '.repeat(200)}\n`,
      );
    }
    const beatsFile = path.join(dir, 'beats.json');
    writeFileSync(beatsFile, JSON.stringify({ beats: [{ name: 'nightly-check', cron: '0 3 * * *', timezone: 'UTC', text: 'check the backups' }] }));
    const port = await freePort();
    const configFile = path.join(dir, 'muninn.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        data_dir: dir,
        server: { host: '127.0.0.1', port },
        database: { url: null },
        redis: { url: null },
        skills: { dir: skillsDir },
        beats: { default_file: beatsFile },
        log: { level: 'info' },
      }),
    );
    const statuses: number[] = [];
    let polling = true;
    const firstReady = (async () => {
      while (polling) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          statuses.push(res.status);
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const starting = startServeProcess('readyz', 'all', configFile, 90_000, 'production');
    await firstReady;
    polling = false;
    // The first moment /readyz says ready, everything start-up syncs is there.
    const owner = new GraphQLTestClient(`http://127.0.0.1:${port}`, readFileSync(path.join(dir, 'owner.token'), 'utf8').trim());
    const res = await owner.http<{ skills: Array<{ name: string }>; beats: Array<{ name: string; managed: boolean }> }, unknown>(
      '{ skills { name } beats { name managed } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.skills.filter((s) => s.name.startsWith('skill-'))).toHaveLength(SKILLS);
    expect(res.data!.beats).toContainEqual({ name: 'nightly-check', managed: true });
    server = await starting;
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
  });
});
