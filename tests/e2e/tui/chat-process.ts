import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const REGISTER = path.join(ROOT, 'tests/support/swc-register.js');
const ENTRY = path.join(ROOT, 'tests/support/cli-process.ts');
export const PROMPT = 'you> ';

/** Epoch milliseconds on the clock the fake model server records its requests with. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** A piece of stdout and when it reached the test. */
export interface Arrival {
  at: number;
  text: string;
}

export interface ChatProcessOptions {
  /** Extra environment; the child gets only PATH, a temporary HOME and these (no MUNINN_* from the test run). */
  env?: NodeJS.ProcessEnv;
}

/**
 * `muninn chat` as a real child process (`node -r swc-register tests/support/cli-process.ts chat …`) with
 * stdin, stdout and stderr as pipes. Records every stdout chunk with its arrival time.
 */
export class ChatProcess {
  readonly arrivals: Arrival[] = [];
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly home: string;
  private waiters: Array<() => void> = [];

  private constructor(args: string[], options: ChatProcessOptions) {
    this.home = mkdtempSync(path.join(os.tmpdir(), 'muninn-chat-home-'));
    this.child = spawn(process.execPath, ['-r', REGISTER, ENTRY, 'chat', ...args], {
      cwd: this.home,
      env: { PATH: process.env.PATH, HOME: this.home, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8');
    this.child.stderr!.setEncoding('utf8');
    this.child.stdout!.on('data', (text: string) => {
      this.arrivals.push({ at: now(), text });
      this.stdout += text;
      this.wake();
    });
    this.child.stderr!.on('data', (text: string) => {
      this.stderr += text;
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.wake();
        resolve({ code, signal });
      });
    });
  }

  static start(args: string[], options: ChatProcessOptions = {}): ChatProcess {
    return new ChatProcess(args, options);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Whether the process still runs. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `check` holds (re-checked on output and exit), or fails with what was printed. */
  async waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  }

  /** Waits for `text` on stdout after offset `from`. */
  waitForText(text: string, from = 0, timeoutMs?: number): Promise<void> {
    return this.waitFor(() => this.stdout.indexOf(text, from) >= 0, JSON.stringify(text), timeoutMs);
  }

  /** Waits until the client is idle: stdout ends with the prompt. */
  waitForPrompt(timeoutMs?: number): Promise<void> {
    return this.waitFor(() => this.stdout.endsWith(PROMPT), 'the prompt', timeoutMs);
  }

  /** Types a line. */
  writeLine(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  /**
   * Sends a line at the prompt and returns what the client printed until the next prompt (the echoed
   * line included, the prompt not).
   */
  async say(line: string, timeoutMs?: number): Promise<string> {
    await this.waitForPrompt();
    const mark = this.stdout.length;
    this.writeLine(line);
    await this.waitFor(() => this.stdout.length > mark + line.length + 1 && this.stdout.endsWith(PROMPT), `the answer to ${JSON.stringify(line)}`, timeoutMs);
    return this.stdout.slice(mark, -PROMPT.length);
  }

  /** Ctrl-C as a signal (what a terminal sends the foreground process; stdin is a pipe here). */
  interrupt(): void {
    this.child.kill('SIGINT');
  }

  endInput(): void {
    this.child.stdin!.end();
  }

  /** Kills the process if it still runs and removes its temporary HOME. */
  async dispose(): Promise<void> {
    if (this.alive) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    rmSync(this.home, { recursive: true, force: true });
  }
}
