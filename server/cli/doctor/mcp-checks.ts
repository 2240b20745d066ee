import { createLogger } from '../../common/logger';
import { SecretRedactor } from '../../common/secret-redactor';
import type { AppConfig } from '../../config';
import { McpConnection } from '../../modules/mcp';
import type { CheckResult } from './check';

/**
 * One line per server of `mcp.servers`: a server without per-user auth is started (stdio) or reached
 * (http) as the server would, initialized, and its tools listed, then closed again; per-user and OAuth
 * servers connect with each user's credentials, so only their definition is reported. Servers added at
 * run time (stored in the database) are checked by the server itself and shown in `mcpServers`.
 */
export async function checkMcpServers(config: AppConfig): Promise<CheckResult[]> {
  const servers = Object.entries(config.mcp.servers);
  if (!servers.length) return [{ name: 'mcp', verdict: 'ok', message: 'no servers in mcp.servers (servers added in the console are checked by the server)' }];
  const logger = createLogger({ level: 'silent', pretty: false, redactor: new SecretRedactor() });
  return Promise.all(
    servers.map(async ([name, def]): Promise<CheckResult> => {
      const label = `mcp ${name}`;
      const where = def.transport === 'stdio' ? `stdio "${[def.command, ...def.args].join(' ')}"` : `http ${def.url}`;
      if (!def.enabled) return { name: label, verdict: 'ok', message: `${where}: disabled` };
      if (def.auth !== 'none') return { name: label, verdict: 'ok', message: `${where}: auth ${def.auth}, connected with each user's own credentials (not checked here)` };
      const conn = new McpConnection({ name, definition: def, connectTimeoutMs: config.mcp.connect_timeout_ms, maxBackoffMs: 0, logger, onToolsChanged: () => undefined });
      try {
        await conn.ensure();
        const tools = conn.tools.map((t) => t.name);
        const shown = tools.slice(0, 6).join(', ') + (tools.length > 6 ? ', …' : '');
        return { name: label, verdict: 'ok', message: `${where}: ${tools.length} tool${tools.length === 1 ? '' : 's'}${tools.length ? ` (${shown})` : ''}` };
      } catch {
        return { name: label, verdict: 'FAIL', message: `${where}: ${conn.lastError ?? 'could not connect'}`, hint: `fix mcp.servers.${name} or set enabled: false` };
      } finally {
        await conn.close();
      }
    }),
  );
}
