/**
 * The `muninn` CLI from the TypeScript sources, for tests that need a real process (a TTY, signals, stdin
 * and stdout as pipes): `node -r tests/support/swc-register.js tests/support/cli-process.ts chat --url …`.
 * It does what bin/muninn.js does with the built CLI: the exit code comes from `main`, and the process
 * ends by itself once nothing is left running.
 */
import { runCli } from './run-cli';

runCli(process.argv.slice(2));
