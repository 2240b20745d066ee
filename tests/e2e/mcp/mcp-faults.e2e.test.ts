import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { eventually } from '../../support/chat-helpers';
import { startTestApp, type TestApp } from '../../support/test-app';

const MCP_SERVERS = /* GraphQL */ `query { mcpServers { name state lastError } }`;

describe('MCP faults: a missing command and a server that never answers initialize', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        mcp: {
          connect_timeout_ms: 1500,
          list_wait_ms: 200,
          servers: {
            missing: { transport: 'stdio', command: '/nonexistent/mcp-server-binary', requires_approval: false },
            silent: { transport: 'stdio', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], requires_approval: false },
          },
        },
      },
    });
  });
  afterAll(() => t.close());

  it('each shows a clear state and last error in mcpServers; listing tools does not fail or hang the turn', async () => {
    const owner = t.client(t.ownerToken);
    const ctx = new Ctx({ actor: { kind: 'user', userId: 'owner', trust: TrustLevel.OWNER }, logger: t.app.logger });
    const started = Date.now();
    const tools = await t.app.services.mcp.hub.toolsFor(ctx);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(tools.filter((x) => x.name.startsWith('missing__') || x.name.startsWith('silent__'))).toEqual([]);
    // The silent server is still connecting when the turn goes on; it fails at its connect timeout.
    const servers = await eventually(async () => {
      const res = await owner.http<{ mcpServers: Array<{ name: string; state: string; lastError: string | null }> }, unknown>(MCP_SERVERS, {});
      const list = res.data!.mcpServers;
      return list.find((s) => s.name === 'silent')?.state === 'FAILED' ? list : undefined;
    }, 8000, 'the silent server to fail');
    expect(servers.find((s) => s.name === 'missing')).toMatchObject({ state: 'FAILED', lastError: expect.stringMatching(/not found|ENOENT|exited/i) });
    expect(servers.find((s) => s.name === 'silent')).toMatchObject({ state: 'FAILED', lastError: expect.stringMatching(/did not answer initialize within 1500 ms|timed out/i) });
    await owner.close();
  });
});
