import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../common/errors';
import { configFilePath, type AppConfig } from '../../config';
import { loadCliConfig } from '../cli-app';
import { println, type CliIO, type CliRun } from '../cli-io';
import { checkTelegram } from '../doctor/channel-checks';
import { formatCheck, type CheckResult } from '../doctor/check';
import { checkProviders } from '../doctor/provider-checks';
import { checkRedis } from '../doctor/redis-check';
import { checkPricing } from '../doctor/pricing-check';
import { checkDataFolder, checkDatabase } from '../doctor/storage-checks';
import { checkFfmpeg, checkVoice } from '../doctor/voice-checks';
import { checkMcpServers } from '../doctor/mcp-checks';

/**
 * `muninn doctor`: checks config, data folder, database, Redis, model providers, prices, channels, voice (roles, ffmpeg) and MCP servers, one line
 * each (`ok`, `warn` or `FAIL` plus a hint), and exits 1 when any check fails. Nothing is changed: the
 * trial Redis is stopped again and a missing database is reported, not created.
 */
export function registerDoctorCommand(program: Command, run: CliRun): void {
  program
    .command('doctor')
    .description('check the configuration and everything the server needs')
    .action(async () => {
      const { io } = run;
      const results: CheckResult[] = [];
      const report = (result: CheckResult) => {
        results.push(result);
        println(io.stdout, formatCheck(result));
      };
      const config = checkConfig(io, report);
      if (config) {
        report(checkDataFolder(config));
        report(await checkDatabase(config));
        report(await checkRedis(config));
        for (const result of await checkProviders(config, io.env)) report(result);
        report(checkPricing(config));
        report(checkTelegram(config));
        report(checkVoice(config, io.env));
        report(await checkFfmpeg(config));
        for (const result of await checkMcpServers(config)) report(result);
      }
      const failed = results.filter((r) => r.verdict === 'FAIL').length;
      const warned = results.filter((r) => r.verdict === 'warn').length;
      const skipped = config ? '' : '; the other checks need a valid configuration';
      println(io.stdout, `\n${failed} failed, ${warned} warning${warned === 1 ? '' : 's'}${skipped}.`);
      if (failed) run.exitCode = 1;
    });
}

/** Loads the config and reports it; null when it is invalid (the error names every bad key). */
function checkConfig(io: CliIO, report: (r: CheckResult) => void): AppConfig | null {
  const file = configFilePath(io.env, io.cwd);
  try {
    const config = loadCliConfig(io);
    const source = existsSync(file) ? `loaded ${file}` : `no ${file}; using defaults and environment`;
    report({ name: 'config', verdict: 'ok', message: source });
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const [first, ...rest] = err.message.split('\n');
    report({ name: 'config', verdict: 'FAIL', message: first!, details: rest });
    return null;
  }
}
