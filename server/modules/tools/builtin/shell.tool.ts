import { execFile, type ExecFileException } from 'node:child_process';
import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import { clip } from '../tool-args';
import { defineTool, ToolRefusedError, type Tool } from '../tool';

export interface ShellToolOptions {
  /** Programs (argv[0], matched exactly) that may run. `tools.shell.allow`. */
  allow: readonly string[];
  /** Timeout of one command; the process is killed (SIGKILL) after it. `tools.shell.timeout_ms`. */
  timeoutMs: number;
  /** Largest stdout kept, in characters (stderr gets a quarter). `tools.max_output_chars`. */
  maxOutputChars: number;
  /**
   * Environment of the command. The server's own environment holds API keys, so only a minimal one is passed.
   * @default PATH, HOME and LANG=C.UTF-8
   */
  env?: NodeJS.ProcessEnv;
  /** Working directory. @default the server's */
  cwd?: string;
}

const schema = z
  .object({
    argv: z
      .array(z.string().max(4000))
      .min(1)
      .max(200)
      .describe('Program and arguments, e.g. ["ls", "-la", "/tmp"]. No shell: pipes, globs and $VARS are not interpreted.'),
  })
  .strict();

export type ShellArgs = z.output<typeof schema>;

/**
 * `shell` (OWNER, approval required): runs one allowlisted program with `execFile` — never through a
 * shell — with a timeout, and returns the exit code, stdout and stderr (capped).
 */
export function createShellTool(options: ShellToolOptions): Tool<ShellArgs> {
  const allow = new Set(options.allow);
  const env = options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C.UTF-8' };
  const maxStdout = options.maxOutputChars;
  const maxStderr = Math.max(100, Math.floor(options.maxOutputChars / 4));
  return defineTool({
    name: 'shell',
    description: `Runs one program with arguments (no shell). Allowed programs: ${[...allow].join(', ') || 'none'}. Needs approval.`,
    schema,
    minTrust: TrustLevel.OWNER,
    requiresApproval: true,
    summarizeArgs: (a) => clip(a.argv.map((s) => (/\s/.test(s) ? JSON.stringify(s) : s)).join(' '), 200),
    async run(tc, args) {
      const [program, ...rest] = args.argv as [string, ...string[]];
      if (!allow.has(program)) throw new ToolRefusedError(`"${clip(program, 100)}" is not in tools.shell.allow`);
      return new Promise((resolve, reject) => {
        const child = execFile(
          program,
          rest,
          {
            shell: false,
            timeout: options.timeoutMs,
            killSignal: 'SIGKILL',
            maxBuffer: maxStdout * 4 + 1024,
            signal: tc.signal,
            env,
            cwd: options.cwd,
            windowsHide: true,
            encoding: 'utf8',
          },
          (err: ExecFileException | null, stdout: string, stderr: string) => {
            if (err && typeof err.code === 'string' && err.code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
              reject(new Error(err.code === 'ABORT_ERR' ? 'stopped' : `could not run "${program}": ${err.code}`));
              return;
            }
            const timedOut = Boolean(err?.killed && err.signal === 'SIGKILL');
            resolve({
              exitCode: typeof err?.code === 'number' ? err.code : err ? null : 0,
              signal: err?.signal ?? null,
              ...(timedOut ? { timedOut: `killed after ${options.timeoutMs} ms` } : {}),
              ...(err?.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' ? { outputLimit: 'output too large; the process was stopped' } : {}),
              stdout: capText(stdout, maxStdout),
              stderr: capText(stderr, maxStderr),
            });
          },
        );
        // No input: programs that read stdin see end-of-file instead of waiting for the timeout.
        child.stdin?.end();
      });
    },
  });
}

function capText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[truncated ${text.length - max} chars]`;
}
