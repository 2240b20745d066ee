// A real MCP server over stdio (the SDK's McpServer) whose tools misbehave on purpose, for the fault tests.
// Every notable event is appended to the file named by FAULT_LOG (one line each), so a test can see
// what the server went through (a call started, a cancellation arrived).
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const log = (line) => {
  if (process.env.FAULT_LOG) appendFileSync(process.env.FAULT_LOG, `${line}\n`);
};

const server = new McpServer({ name: 'fault-server', version: '1.0.0' });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

server.registerTool('echo', { description: 'Repeats the text.', inputSchema: { text: z.string() } }, async ({ text: t }) => text(`echo:${t}`));

server.registerTool('slow', { description: 'Answers after some seconds.', inputSchema: { seconds: z.number() } }, async ({ seconds }) => {
  log(`slow started ${process.pid}`);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return text('slow done');
});

server.registerTool('hang', { description: 'Never answers.', inputSchema: {} }, async (_args, extra) => {
  log('hang started');
  extra.signal.addEventListener('abort', () => log('hang cancelled'));
  return new Promise(() => {});
});

server.registerTool('huge', { description: 'Answers with about 5 MB of text.', inputSchema: {} }, async () => text('0123456789abcdef'.repeat(5 * 1024 * 1024 / 16)));

server.registerTool('garbage', { description: 'Prints garbage on stdout, then answers.', inputSchema: {} }, async () => {
  process.stdout.write('this line is not JSON-RPC {{{\n');
  return text('answered after garbage');
});

server.registerTool('add_tool', { description: 'Adds the tool late_tool (the client is told the list changed).', inputSchema: {} }, async () => {
  server.registerTool('late_tool', { description: 'A tool that appeared later.', inputSchema: {} }, async () => text('late tool ran'));
  return text('added');
});

await server.connect(new StdioServerTransport());
log(`ready ${process.pid}`);
