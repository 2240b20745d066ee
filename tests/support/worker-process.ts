/**
 * A worker process for recovery tests: `node -r tests/support/swc-register.js tests/support/worker-process.ts`
 * with MUNINN_TEST_CONFIG (raw config JSON) and optionally RECORDER_URL (a ChatRecorderServer, registered
 * as the `telegram` transport). Prints "ready" on stdout once its workers run.
 */
import 'reflect-metadata';
import { App } from '../../server/app';
import { loadConfig } from '../../server/config';
import { RecorderTransport } from './fakes/chat-recorder';

async function main(): Promise<void> {
  const config = loadConfig({ raw: JSON.parse(process.env.MUNINN_TEST_CONFIG ?? '{}'), env: {} });
  const app = await App.create({ config, logDestination: process.stderr });
  if (process.env.RECORDER_URL) app.chat!.channels.register(new RecorderTransport('telegram', process.env.RECORDER_URL));
  await app.startWorkers();
  await app.startChannels();
  process.stdout.write('ready\n');
  const stop = () => void app.dispose().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
