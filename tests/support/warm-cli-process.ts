/**
 * Like cli-process.ts, but it only loads the CLI's modules at first and runs the command once a line
 * arrives on stdin (prepareServeProcess in serve-process.ts), so tests that restart the server many times
 * do not wait for node_modules to load each time. The command itself runs exactly as in cli-process.ts.
 */
import { runCli } from './run-cli';

process.stdin.once('data', () => {
  process.stdin.pause();
  runCli(process.argv.slice(2));
});
