import { classifyAnswerStart, holdBackToolCallText } from '../../../server/modules/agent/model-call-executor';

function run(pieces: string[]): string {
  let out = '';
  const push = holdBackToolCallText((t) => (out += t));
  for (const p of pieces) push(p);
  return out;
}

describe('holdBackToolCallText', () => {
  it('streams ordinary text unchanged, even when split into tiny pieces', () => {
    expect(run(['Hel', 'lo', ' there'])).toBe('Hello there');
    expect(run(['{', 'not a tool call}'])).toBe('{not a tool call}');
    expect(run(['``', '`ts\nconst a = 1;\n```'])).toBe('```ts\nconst a = 1;\n```');
  });

  it('streams nothing of a JSON tool_calls block, bare or fenced', () => {
    expect(run(['{"to', 'ol_calls":[{"name":"current_time","arguments":{}}]}'])).toBe('');
    expect(run(['```j', 'son\n', '{ "tool_calls": [] }\n```'])).toBe('');
  });

  it('classifies answer starts', () => {
    expect(classifyAnswerStart('  ')).toBe('undecided');
    expect(classifyAnswerStart('{ "tool')).toBe('undecided');
    expect(classifyAnswerStart('{"tool_calls"')).toBe('tool-calls');
    expect(classifyAnswerStart('{"answer": 1}')).toBe('text');
    expect(classifyAnswerStart('Sure')).toBe('text');
  });
});
