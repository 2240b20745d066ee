import { newId } from '../../../server/common/ids';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { idsBefore, memoryOwnerOf, recentTurns } from '../../../server/modules/summarizer';
import { ChatKind } from '../../../server/modules/sessions';
import { MemoryScope } from '../../../server/modules/memory';

function message(role: MessageRole, content: string): Message {
  return Object.assign(new Message(), { id: newId(), role, content, status: MessageStatus.DONE, sessionId: 's', userId: null });
}

describe('compaction helpers', () => {
  it('recentTurns keeps the last N turns from a user message on, without the old summary', () => {
    const rows = [
      message(MessageRole.SYSTEM, 'old summary'),
      message(MessageRole.USER, 'u1'),
      message(MessageRole.ASSISTANT, 'a1'),
      message(MessageRole.USER, 'u2'),
      message(MessageRole.ASSISTANT, 'calls a tool'),
      message(MessageRole.TOOL, 'result'),
      message(MessageRole.ASSISTANT, 'a2'),
      message(MessageRole.USER, 'u3'),
      message(MessageRole.ASSISTANT, 'a3'),
    ];
    expect(recentTurns(rows, 1).map((m) => m.content)).toEqual(['u3', 'a3']);
    expect(recentTurns(rows, 2).map((m) => m.content)).toEqual(['u2', 'calls a tool', 'result', 'a2', 'u3', 'a3']);
    expect(recentTurns(rows, 10).map((m) => m.content)).toEqual(['u1', 'a1', 'u2', 'calls a tool', 'result', 'a2', 'u3', 'a3']);
    expect(recentTurns(rows, 0)).toEqual([]);
  });

  it('idsBefore gives increasing, unique ids that sort just before the anchor', () => {
    const older = newId(Date.now() - 1000);
    const anchor = newId(Date.now());
    const ids = idsBefore(anchor, 50);
    expect(new Set(ids).size).toBe(50);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => id < anchor && id > older)).toBe(true);
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
  });

  it('memoryOwnerOf: DMs write the user\'s memories, groups the group\'s, sessions of nobody none', () => {
    expect(memoryOwnerOf({ chatKind: ChatKind.DM, key: 'agent:main:telegram:dm:u1', userId: 'u1' })).toEqual({ scope: MemoryScope.USER, userId: 'u1', groupId: null });
    expect(memoryOwnerOf({ chatKind: ChatKind.GROUP, key: 'agent:main:telegram:group:g1', userId: null })).toEqual({
      scope: MemoryScope.GROUP,
      userId: null,
      groupId: 'agent:main:telegram:group:g1',
    });
    expect(memoryOwnerOf({ chatKind: ChatKind.DM, key: 'hook:deploy', userId: null })).toBeNull();
  });
});
