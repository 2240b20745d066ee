import fc from 'fast-check';
import { buildPrompt, type PromptInput } from '../../../server/modules/agent/prompt-builder';
import type { ChatMessage } from '../../../server/modules/models';
import { estimateMessages } from '../../../server/modules/models/token-estimator';

/** One exchange: a user message, then replies, tool calls and results. */
const exchange = fc
  .record({
    question: fc.string({ minLength: 1, maxLength: 400 }),
    toolRounds: fc.integer({ min: 0, max: 2 }),
    answer: fc.string({ minLength: 0, maxLength: 600 }),
    id: fc.integer({ min: 0, max: 1e9 }),
  })
  .map(({ question, toolRounds, answer, id }) => {
    const out: ChatMessage[] = [{ role: 'user', content: `Q${id}: ${question}` }];
    for (let r = 0; r < toolRounds; r++) {
      const callId = `call_${id}_${r}`;
      out.push({ role: 'assistant', content: '', toolCalls: [{ id: callId, name: 'current_time', arguments: '{}' }] });
      out.push({ role: 'tool', content: `result ${r} ${answer.slice(0, 80)}`, toolCallId: callId, name: 'current_time' });
    }
    out.push({ role: 'assistant', content: `A${id}: ${answer}` });
    return out;
  });

const scenario = fc.record({
  /** History may start mid-exchange (the load limit cut it): orphan replies first. */
  orphans: fc.array(fc.constantFrom<ChatMessage>({ role: 'assistant', content: 'orphan reply' }, { role: 'tool', content: 'orphan result', toolCallId: 'x' }), { maxLength: 3 }),
  exchanges: fc.array(exchange, { maxLength: 25 }),
  turn: fc.array(fc.string({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 3 }),
  memories: fc.array(fc.record({ content: fc.string({ minLength: 1, maxLength: 300 }), type: fc.constantFrom('fact', 'lesson', 'summary') }), { maxLength: 30 }),
  summary: fc.option(fc.string({ minLength: 1, maxLength: 6000 }).map((s) => `SUMMARY-START ${s}`), { nil: null }),
  window: fc.integer({ min: 300, max: 20_000 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function inputOf(s: Scenario): PromptInput {
  const turn: ChatMessage[] = s.turn.map((t) => ({ role: 'user', content: `NOW ${t}` }));
  return {
    systemPrompt: 'You are Muninn.',
    tools: [],
    nativeTools: true,
    skills: [],
    memories: s.memories,
    context: ['Channel: web (direct chat)'],
    turnContext: ['Now: 2026-12-03 16:00 UTC'],
    summary: s.summary,
    history: [...s.orphans, ...s.exchanges.flat(), ...turn],
    pinnedTail: turn.length,
    budgetTokens: s.window,
    estimate: estimateMessages,
  };
}

describe('buildPrompt (property)', () => {
  it('fits the budget whenever the irreducible part does, keeps the summary and whole exchanges, never starts history with an orphan reply', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const input = inputOf(s);
        const built = buildPrompt(input);
        const tail = input.history.slice(-input.pinnedTail);
        const floor = buildPrompt({ ...input, history: tail, memories: [], summary: null, budgetTokens: 0 }).estimatedTokens;

        // 1. The running turn is always there, last, untouched; the turn note (memories, time) follows its
        // last user message, so nothing before the running turn changes from one turn to the next.
        const end = built.messages.slice(-tail.length - 1);
        expect(end[end.length - 1]!.role).toBe('system');
        expect(String(end[end.length - 1]!.content)).toContain('Now: 2026-12-03 16:00 UTC');
        expect(end.slice(0, -1)).toEqual(tail);
        // 2. Fits the budget whenever the system part and the running turn do.
        if (floor <= input.budgetTokens) expect(built.estimatedTokens).toBeLessThanOrEqual(input.budgetTokens);
        expect(built.estimatedTokens).toBe(estimateMessages(built.messages));

        const body = built.messages.slice(1, built.messages.length - tail.length - 1);
        const summaryAt = body.findIndex((m) => m.role === 'system' && String(m.content).startsWith('SUMMARY-START'));
        // 3. The summary stays (first after the system part) whenever there is room for a fair part of it.
        if (s.summary && floor + 200 <= input.budgetTokens) expect(summaryAt).toBe(0);
        // It is the last thing given up: when it is cut, no history and no memory is left.
        if (s.summary && built.summaryCut && summaryAt < 0) {
          expect(built.droppedMemories).toBe(s.memories.length);
          expect(body.filter((m) => m.role !== 'system')).toEqual([]);
        }
        // 4. Recalled memories go before any history.
        if (built.droppedMessages > 0) expect(built.droppedMemories).toBe(s.memories.length);

        // 5. Kept history is a run of whole exchanges, the newest ones, starting with a user message.
        const history = body.filter((m) => m.role !== 'system');
        if (history.length) expect(history[0]!.role).toBe('user');
        const kept = s.exchanges.slice(s.exchanges.length - countUsers(history));
        expect(history).toEqual(kept.flat());
      }),
      { numRuns: 300 },
    );
  });
});

function countUsers(messages: ChatMessage[]): number {
  return messages.filter((m) => m.role === 'user').length;
}
