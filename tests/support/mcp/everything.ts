import path from 'node:path';

/** `mcp.servers.<name>` for `@modelcontextprotocol/server-everything` over stdio (started with this Node). */
export function everythingServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const entry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
  return { transport: 'stdio', command: process.execPath, args: [entry, 'stdio'], ...extra };
}
