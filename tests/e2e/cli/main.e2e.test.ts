import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli, tempDir } from './run-cli';

describe('muninn main(argv, io)', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists the commands on stdout and exits 0', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const command of ['serve', 'token', 'users', 'trust', 'migrate', 'clear-memory', 'doctor']) {
      expect(res.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });

  it('an unknown command exits 1 with commander usage on stderr', async () => {
    const res = await runCli(['frobnicate']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("error: unknown command 'frobnicate'");
  });

  it('a ConfigError exits 2 with its message', async () => {
    const missing = path.join(dir, 'missing.json');
    const res = await runCli(['users', 'list'], { env: { MUNINN_DATA_DIR: dir, MUNINN_CONFIG: missing } });
    expect(res).toEqual({
      code: 2,
      stdout: '',
      stderr: `muninn: MUNINN_CONFIG points to ${missing}, which does not exist. Fix: create it or unset MUNINN_CONFIG.\n`,
    });
  });

  it('any other error exits 1 with one line, and the stack only with DEBUG', async () => {
    const notAFolder = path.join(dir, 'file');
    writeFileSync(notAFolder, '');
    const res = await runCli(['migrate'], { env: { MUNINN_DATA_DIR: notAFolder } });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^muninn: EEXIST: file already exists, mkdir '.*'\n$/);

    const debug = await runCli(['migrate'], { env: { MUNINN_DATA_DIR: notAFolder, DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^muninn: EEXIST.*\n/);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('serve rejects an unknown --role before starting anything', async () => {
    const res = await runCli(['serve', '--role', 'janitor'], { env: { MUNINN_DATA_DIR: dir } });
    expect(res).toMatchObject({
      code: 1,
      stderr: 'muninn: --role must be all, api or worker; got "janitor".\n',
    });
  });
});
