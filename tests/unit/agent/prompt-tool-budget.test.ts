import { buildPrompt, type PromptInput } from '../../../server/modules/agent/prompt-builder';
import type { ChatMessage, ToolSpec } from '../../../server/modules/models';
import { estimateMessages } from '../../../server/modules/models/token-estimator';

/** Tools with large schemas, like a big MCP server's. */
function mcpTools(count: number): ToolSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `issues__tool_${i}`,
    description: `Tool number ${i} of the issue tracker, which does one particular thing with issues. (MCP server issues)`,
    parameters: { type: 'object', properties: Object.fromEntries(Array.from({ length: 8 }, (_, j) => [`field_${j}`, { type: 'string', description: `The ${j}th field of tool ${i}, described at some length.` }])) },
  }));
}

function input(tools: ToolSpec[], budgetTokens: number, nativeTools = true): PromptInput {
  const history: ChatMessage[] = [];
  for (let i = 0; i < 20; i++) history.push({ role: 'user', content: `Question ${i}: ${'words '.repeat(40)}` }, { role: 'assistant', content: `Answer ${i}: ${'more words '.repeat(40)}` });
  history.push({ role: 'user', content: 'The question now.' });
  return { systemPrompt: 'You are Muninn.', tools, nativeTools, skills: [], memories: [], context: [], summary: null, history, pinnedTail: 1, budgetTokens, estimate: estimateMessages };
}

describe('buildPrompt: tool schemas count against the prompt budget', () => {
  it('native tool schemas (sent beside the messages) are counted, so older history makes room for them', () => {
    const tools = mcpTools(40);
    const full = buildPrompt(input(tools, 1_000_000));
    const budget = full.estimatedTokens - 1000;
    // The messages alone (what was counted before) fit this budget with the whole history.
    expect(estimateMessages(full.messages)).toBeLessThanOrEqual(budget);
    expect(full.droppedMessages).toBe(0);
    const built = buildPrompt(input(tools, budget));
    expect(built.droppedMessages).toBeGreaterThan(0);
    expect(built.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(built.estimatedTokens).toBeGreaterThan(estimateMessages(built.messages));
    expect(built.messages.at(-1)).toEqual({ role: 'user', content: 'The question now.' });
  });

  it('with tools described in the text (no native tools) the schemas are already in the messages and are not counted twice', () => {
    const built = buildPrompt(input(mcpTools(5), 1_000_000, false));
    expect(built.estimatedTokens).toBe(estimateMessages(built.messages));
  });
});
