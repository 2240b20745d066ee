/**
 * Issue 4 acceptance 3 (memory part): in a Telegram group, no user's private memory reaches the prompt
 * sent to the model — while in a DM the user's own memory is recalled (so recall is really on).
 */
import { MemoryScope, MemoryType } from '../../../server/modules/memory';
import { modelSaw, startTelegramKit, type TelegramKit } from './telegram-kit';

const GROUP = -1009876543;
let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit({ telegram: { groups: [String(GROUP)] } });
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

it('recalls own memories in a DM, and nobody’s private memories in a group', async () => {
  const ada = await k.linkUser(501);
  const bob = await k.linkUser(502);
  const ctx = k.t.app.systemCtx('test');
  const memories = k.t.app.services.memories;
  await memories.create(ctx, { content: 'Ada favourite colour is zebraochre', type: MemoryType.FACT, scope: MemoryScope.USER, userId: ada });
  await memories.create(ctx, { content: 'Bob favourite colour is quokkateal', type: MemoryType.FACT, scope: MemoryScope.USER, userId: bob });

  k.tg.pushMessage({ chatId: 502, from: 502, text: 'what is my favourite colour?' });
  await k.tg.waitForSent(502, 1);
  const dm = modelSaw(k.model).at(-1)!;
  expect(dm).toContain('quokkateal');
  expect(dm).not.toContain('zebraochre');

  for (const from of [501, 502]) {
    const before = k.model.chatRequests().length;
    k.tg.pushMessage({ chatId: GROUP, from, text: `@${k.tg.bot.username} what is my favourite colour?` });
    await k.tg.waitFor(() => k.model.chatRequests().length > before, 'the group turn');
    const seen = modelSaw(k.model).at(-1)!;
    expect(seen).toContain('favourite colour');
    expect(seen).not.toContain('zebraochre');
    expect(seen).not.toContain('quokkateal');
  }
  await k.tg.waitForSent(GROUP, 2);
});
