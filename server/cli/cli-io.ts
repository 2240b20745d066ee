import { createInterface } from 'node:readline';

/** Somewhere text goes: process.stdout/stderr, or a capture in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
}

/**
 * Everything a command may touch of its process, so the CLI runs in-process in tests exactly as it does
 * from a terminal. Config is loaded from `env` and `cwd`; normal output goes to `stdout` (what scripts
 * capture), notes, prompts and logs to `stderr`; confirmations are read from `stdin`.
 */
export interface CliIO {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: NodeJS.ReadableStream;
}

/** The real process's streams and environment. */
export function processIO(): CliIO {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
  };
}

/** State of one CLI run shared with the commands: its streams and the exit code they set. */
export interface CliRun {
  io: CliIO;
  /** Exit code `main` returns when no error was thrown. @default 0 */
  exitCode: number;
}

/**
 * An expected failure of a command (bad argument, refused operation). `main` prints only its message,
 * prefixed with `muninn:`, and exits with `exitCode`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Writes one line to a stream. */
export function println(out: OutputStream, line = ''): void {
  out.write(`${line}\n`);
}

/**
 * Asks a question on stderr and resolves with the first line read from stdin (trimmed), or '' when
 * stdin ends first — so a closed stdin never counts as consent.
 */
export async function ask(io: CliIO, question: string): Promise<string> {
  io.stderr.write(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    return await new Promise<string>((resolve) => {
      rl.once('line', (line) => resolve(line.trim()));
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
  }
}
