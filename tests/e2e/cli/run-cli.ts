import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { main } from '../../../server/cli/main';

/** What one in-process `muninn` run printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** The whole environment of the run (nothing is inherited from the test process). */
  env?: NodeJS.ProcessEnv;
  /** Working directory (where muninn.json is looked up). @default a fresh temporary folder */
  cwd?: string;
  /** Text fed to stdin; stdin is closed after it. @default '' */
  stdin?: string;
}

/** Runs `muninn <args>` in-process through `main(argv, io)` with captured streams. */
export async function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const cwd = options.cwd ?? tempDir('muninn-cli-cwd-');
  const code = await main(args, {
    env: options.env ?? {},
    cwd,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from(options.stdin ? [options.stdin] : []),
  });
  if (!options.cwd) rmSync(cwd, { recursive: true, force: true });
  return { code, stdout, stderr };
}

/** A fresh temporary folder; remove it with `rmSync(dir, { recursive: true, force: true })`. */
export function tempDir(prefix = 'muninn-cli-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}
