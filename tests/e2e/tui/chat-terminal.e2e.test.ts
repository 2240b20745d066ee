/**
 * `muninn chat` in a real terminal (tmux): readline's terminal mode, where Ctrl-C is a key rather than a
 * signal, the input history is recalled with Up and kept in <data_dir>/tui-history across runs, and
 * Ctrl-D leaves with exit code 0.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { eventually } from '../../support/chat-helpers';

const ROOT = path.resolve(__dirname, '../../..');
const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One tmux server of our own (its own socket file, removed at the end), a session per chat run. */
class Tmux {
  readonly socket = path.join(os.tmpdir(), `muninn-tmux-${randomUUID().slice(0, 8)}`);

  run(...args: string[]): string {
    return execFileSync('tmux', ['-S', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Starts `command` in a new detached session named `name` (200 columns, so lines do not wrap). */
  start(name: string, command: string): void {
    this.run('new-session', '-d', '-s', name, '-x', '200', '-y', '50', command);
  }

  keys(name: string, ...keys: string[]): void {
    this.run('send-keys', '-t', name, ...keys);
  }

  screen(name: string): string {
    return this.run('capture-pane', '-p', '-t', name);
  }

  async waitFor(name: string, check: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    let last = '';
    try {
      return await eventually(() => {
        last = this.screen(name);
        return check(last) ? last : undefined;
      }, timeoutMs, what);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- screen ---\n${last}`);
    }
  }

  kill(): void {
    try {
      this.run('kill-server');
    } catch {
      // already gone
    }
    rmSync(this.socket, { force: true });
  }
}

/** The last non-empty line of a screen. */
function lastLine(screen: string): string {
  return screen.trimEnd().split('\n').at(-1) ?? '';
}

(hasTmux ? describe : describe.skip)('muninn chat in a terminal (tmux)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tmux: Tmux;
  let dataDir: string;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => {
      const user = [...(req.body?.messages ?? [])].reverse().find((m) => m.role === 'user');
      const text = typeof user?.content === 'string' ? user.content : '';
      return text.includes('hang') ? { hang: true } : { text: `Echo: ${text}`, chunks: 3, chunkDelayMs: 50 };
    });
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } } } });
    tmux = new Tmux();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-chat-tty-'));
  });

  afterAll(async () => {
    tmux.kill();
    rmSync(dataDir, { recursive: true, force: true });
    await t.close();
    await model.close();
  });

  /** `muninn chat` in a tmux session; the shell prints `exit=<code>` when it ends and keeps the pane open. */
  function startChat(name: string): void {
    const env = `env -i PATH=${shellQuote(process.env.PATH ?? '')} HOME=${shellQuote(dataDir)} TERM=xterm MUNINN_DATA_DIR=${shellQuote(dataDir)}`;
    const cli = `${shellQuote(process.execPath)} -r ${shellQuote(path.join(ROOT, 'tests/support/swc-register.js'))} ${shellQuote(path.join(ROOT, 'tests/support/cli-process.ts'))}`;
    tmux.start(name, `cd ${shellQuote(dataDir)} && ${env} ${cli} chat --url ${shellQuote(t.url)} --token ${shellQuote(t.ownerToken)}; echo "exit=$?"; sleep 120`);
  }

  it('streams replies, stops a turn on the Ctrl-C key, recalls and keeps the history, exits 0 on Ctrl-D', async () => {
    startChat('one');
    await tmux.waitFor('one', (s) => lastLine(s) === 'you>', 'the prompt');
    tmux.keys('one', 'hello terminal', 'Enter');
    await tmux.waitFor('one', (s) => s.includes('muninn> Echo: hello terminal\nyou>'), 'the reply');

    tmux.keys('one', 'please hang', 'Enter');
    await eventually(() => model.chatRequests().some((r) => r.endedAt === null), 15_000, 'the hanging model call');
    tmux.keys('one', 'C-c');
    const stopped = await tmux.waitFor('one', (s) => s.includes('✖ turn cancelled\nyou>'), 'the stopped turn');
    expect(stopped).toContain('you> please hang\nstopping…\nℹ Turn stopped (stopTurn).\n✖ turn cancelled\nyou>');

    // Up recalls the last line, Up again the one before.
    tmux.keys('one', 'Up');
    await tmux.waitFor('one', (s) => lastLine(s) === 'you> please hang', 'the last line recalled');
    tmux.keys('one', 'Up');
    await tmux.waitFor('one', (s) => lastLine(s) === 'you> hello terminal', 'the line before recalled');
    tmux.keys('one', 'C-u', 'C-d');
    await tmux.waitFor('one', (s) => s.includes('exit=0'), 'exit code 0');

    const historyFile = path.join(dataDir, 'tui-history');
    expect(existsSync(historyFile)).toBe(true);
    expect(readFileSync(historyFile, 'utf8')).toBe('hello terminal\nplease hang\n');

    // A new run starts with the saved history.
    startChat('two');
    await tmux.waitFor('two', (s) => lastLine(s) === 'you>', 'the prompt of the second run');
    tmux.keys('two', 'Up');
    await tmux.waitFor('two', (s) => lastLine(s) === 'you> please hang', 'the history of the first run');
    // Ctrl-C at the prompt leaves, too.
    tmux.keys('two', 'C-c');
    await tmux.waitFor('two', (s) => s.includes('exit=0'), 'exit code 0 after Ctrl-C at the prompt');
  }, 90_000);
});
