import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App } from '../../server/app';
import type { Clock } from '../../server/common/clock';
import type { AppConfig } from '../../server/config';
import type { ChannelSdk } from '../../server/composition/channel-transports';
import { deepMerge, testConfig } from './test-config';
import { LogCapture } from './log-capture';
import { GraphQLTestClient } from './graphql-client';
import { dropTestDatabase, testDatabaseUrl } from './test-database';

export { testConfig } from './test-config';

export interface TestAppOptions {
  /** Reuse a data folder (restart tests); a new temporary one otherwise. */
  dataDir?: string;
  /** Extra raw config merged over the test defaults. */
  config?: Record<string, unknown>;
  /** Keep the data folder on close (restart tests remove it themselves). */
  keepData?: boolean;
  /** Extra env for config loading. */
  env?: NodeJS.ProcessEnv;
  /** Run the queue workers in the test process too. @default true */
  workers?: boolean;
  /** Time for session resets and retention (e.g. a FakeClock). @default wall-clock time */
  clock?: Clock;
  /** Fakes of the chat platforms' SDKs (a WhatsApp socket factory). */
  channelSdk?: ChannelSdk;
}

export interface TestApp {
  app: App;
  config: AppConfig;
  dataDir: string;
  url: string;
  logs: LogCapture;
  ownerToken: string;
  /** A GraphQL client with the given token (or none). */
  client(token?: string | null): GraphQLTestClient;
  close(): Promise<void>;
}

/** Starts a real server (SQLite file, real Redis, HTTP + WS on 127.0.0.1:0) for one test file. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'muninn-test-'));
  // CI's PostgreSQL pass: a fresh database per app unless the test picks its own.
  const explicitDb = !!(options.config?.database as { url?: unknown } | undefined)?.url || !!options.env?.DATABASE_URL;
  const pgUrl = explicitDb ? null : await testDatabaseUrl(dataDir);
  const config = testConfig(dataDir, pgUrl ? deepMerge(options.config ?? {}, { database: { url: pgUrl } }) : options.config, options.env);
  const logs = new LogCapture();
  const app = await App.create({ config, logDestination: logs, clock: options.clock, channelSdk: options.channelSdk });
  const url = await app.listen();
  if (options.workers !== false && app.chat) {
    await app.startWorkers();
    await app.startChannels();
  }
  const ownerToken = readFileSync(path.join(dataDir, 'owner.token'), 'utf8').trim();
  return {
    app,
    config,
    dataDir,
    url,
    logs,
    ownerToken,
    client: (token) => new GraphQLTestClient(url, token ?? null),
    close: async () => {
      await app.dispose();
      if (!options.keepData) {
        await dropTestDatabase(pgUrl);
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
