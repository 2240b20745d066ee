import path from 'node:path';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mcpServerDefinitionSchema } from '../server/config';
import { Ctx } from '../server/common/ctx';
import { TrustLevel } from '../server/common/trust';
import { McpHub } from '../server/modules/mcp';
import type { BenchContext } from './support/context';
import { summarize } from './support/stats';

/** server-everything (the npm devDependency) over stdio, started with this Node. */
function everything(): { command: string; args: string[] } {
  const entry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
  return { command: process.execPath, args: [entry, 'stdio'] };
}

/**
 * MCP (issue 24): the overhead of a tool call through Muninn's MCP layer (the hub's tool: naming, the
 * per-server concurrency cap, the timeout and cancellation, result rendering) over stdio, above the same
 * call made with the SDK's client directly to another process of the same server (the floor: the server's
 * own time plus the stdio round trip). Calls alternate between the two so both see the same machine.
 */
export async function mcpBench(b: BenchContext): Promise<void> {
  const logger = pino({ level: 'silent' });
  const server = everything();
  const definition = mcpServerDefinitionSchema.parse({ transport: 'stdio', ...server, requires_approval: false });
  const hub = new McpHub(
    { list: async () => [{ name: 'everything', definition, source: 'config' as const }] },
    { headersFor: async () => null, oauthFor: async () => null, connectHint: async () => '' },
    logger,
    { connectTimeoutMs: 15_000, listWaitMs: 15_000, maxResultChars: 16_000, maxBackoffMs: 1000 },
  );
  const raw = new Client({ name: 'bench-floor', version: '1.0.0' });
  try {
    const ctx = new Ctx({ actor: { kind: 'user', userId: 'bench', trust: TrustLevel.OWNER }, logger });
    await hub.start(ctx);
    const tools = await hub.toolsFor(ctx);
    const echo = tools.find((t) => t.name === 'everything__echo');
    if (!echo) throw new Error(`everything__echo was not listed (${tools.map((t) => t.name).join(', ')})`);
    await raw.connect(new StdioClientTransport({ ...server, stderr: 'ignore' }));
    // A fresh signal per call, as the tool pipeline gives each run.
    const tcOf = () => ({ ctx, sessionId: 'bench', channel: 'web', chatId: null, signal: new AbortController().signal });
    const n = b.quick ? 300 : 3000;
    const warm = 100;
    const viaHub: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < n + warm; i++) {
      const message = `ping ${i}`;
      const t0 = performance.now();
      const out = await echo.run(tcOf(), { message });
      const t1 = performance.now();
      const r = (await raw.callTool({ name: 'echo', arguments: { message } })) as { content: Array<{ text?: string }> };
      const t2 = performance.now();
      if (out !== `Echo: ${message}` || r.content[0]?.text !== `Echo: ${message}`) throw new Error(`unexpected echo: ${String(out)}`);
      if (i < warm) continue;
      viaHub.push(t1 - t0);
      direct.push(t2 - t1);
    }
    const floor = summarize(direct);
    const s = summarize(viaHub);
    const overhead = s.p50 - floor.p50;
    b.results.floor('SDK client → server-everything echo (stdio)', { latency: floor });
    b.results.add({
      benchmark: 'MCP tool call over stdio (everything__echo)',
      latency: s,
      floor: { name: 'SDK client direct', p50: floor.p50 },
      target: 'overhead p50 ≤ 2 ms',
      meets: overhead <= 2,
      note: `overhead above the direct SDK call: p50 ${overhead.toFixed(3)} ms; ${n} calls each, alternating`,
      extra: { overheadP50Ms: overhead, floorP50Ms: floor.p50 },
    });
  } finally {
    await raw.close().catch(() => undefined);
    await hub.dispose();
  }
}
