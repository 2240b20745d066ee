import { main } from '../../server/cli/main';

/** Runs the `muninn` CLI's `main` as bin/muninn.js does: its code becomes the exit code; an error is printed. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`muninn: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
