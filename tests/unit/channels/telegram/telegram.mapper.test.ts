import type { Message } from 'grammy/types';
import { mapTelegramMessage, stripBotMentions, type TelegramBotIdentity } from '../../../../server/channels/telegram/telegram.mapper';

const BOT: TelegramBotIdentity = { id: 4242, username: 'Muninn_Bot' };
const ADA = { id: 7, is_bot: false, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' };

function msg(extra: Record<string, unknown>): Message {
  return { message_id: 10, date: 1_700_000_000, chat: { id: 7, type: 'private', first_name: 'Ada' }, from: ADA, ...extra } as unknown as Message;
}
const group = (extra: Record<string, unknown>) => msg({ chat: { id: -100, type: 'supergroup', title: 'G' }, ...extra });
const mention = (offset: number, length: number) => ({ type: 'mention', offset, length });

function mapped(m: Message) {
  const r = mapTelegramMessage(m, BOT);
  if (!r.ok) throw new Error(`skipped: ${r.reason}`);
  return r;
}

describe('mapTelegramMessage', () => {
  it('maps a DM: sender id as handle, chat id, display name, message id and date', () => {
    const { message, media } = mapped(msg({ text: 'hello' }));
    expect(message).toEqual({
      channel: 'telegram',
      chatId: '7',
      chatKind: 'dm',
      sender: { handle: '7', displayName: 'Ada Lovelace' },
      text: 'hello',
      mentionsBot: false,
      replyTo: null,
      platformMessageId: '10',
      receivedAt: new Date(1_700_000_000_000),
    });
    expect(media).toBeNull();
  });

  it('maps groups and supergroups to group, and skips channels', () => {
    expect(mapped(group({ text: 'hi' })).message.chatKind).toBe('group');
    expect(mapped(msg({ chat: { id: -5, type: 'group', title: 'small' }, text: 'hi' })).message).toMatchObject({ chatKind: 'group', chatId: '-5' });
    expect(mapTelegramMessage(msg({ chat: { id: -9, type: 'channel', title: 'news' }, text: 'post' }), BOT)).toEqual({ ok: false, reason: 'chat type channel' });
  });

  it('detects an @mention of the bot (any case) and cuts it out of the text', () => {
    const text = 'hey @muninn_bot, what now?';
    const { message } = mapped(group({ text, entities: [mention(4, 11)] }));
    expect(message.mentionsBot).toBe(true);
    expect(message.text).toBe('hey, what now?');
  });

  it('cuts a leading mention with its punctuation, and a trailing one', () => {
    expect(mapped(group({ text: '@Muninn_Bot: summarise', entities: [mention(0, 11)] })).message.text).toBe('summarise');
    expect(mapped(group({ text: 'thanks @Muninn_Bot', entities: [mention(7, 11)] })).message.text).toBe('thanks');
    expect(mapped(group({ text: 'ask @Muninn_Bot about it', entities: [mention(4, 11)] })).message.text).toBe('ask about it');
  });

  it('does not count a mention of someone else', () => {
    const { message } = mapped(group({ text: 'ping @someone_else', entities: [mention(5, 13)] }));
    expect(message.mentionsBot).toBe(false);
    expect(message.text).toBe('ping @someone_else');
  });

  it('counts a text_mention of the bot, but not of a person', () => {
    const bot = { id: BOT.id, is_bot: true, first_name: 'Muninn' };
    expect(mapped(group({ text: 'Muninn help', entities: [{ type: 'text_mention', offset: 0, length: 6, user: bot }] })).message).toMatchObject({ mentionsBot: true, text: 'help' });
    expect(mapped(group({ text: 'Ada help', entities: [{ type: 'text_mention', offset: 0, length: 3, user: ADA }] })).message).toMatchObject({ mentionsBot: false, text: 'Ada help' });
  });

  it('treats a reply to one of the bot messages as a mention, and records what it replies to', () => {
    const fromBot = { message_id: 3, date: 0, chat: { id: -100, type: 'supergroup' }, from: { id: BOT.id, is_bot: true, first_name: 'Muninn' }, text: 'earlier' };
    const fromAda = { ...fromBot, message_id: 4, from: ADA };
    expect(mapped(group({ text: 'and then?', reply_to_message: fromBot })).message).toMatchObject({ mentionsBot: true, replyTo: '3' });
    expect(mapped(group({ text: 'and then?', reply_to_message: fromAda })).message).toMatchObject({ mentionsBot: false, replyTo: '4' });
  });

  it('normalises /command@bot, counts a bare command, and ignores commands for other bots', () => {
    const cmd = (text: string) => mapped(group({ text, entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }] })).message;
    expect(cmd('/whoami@muninn_bot')).toMatchObject({ text: '/whoami', mentionsBot: true });
    expect(cmd('/approve@Muninn_Bot ABCD2345')).toMatchObject({ text: '/approve ABCD2345', mentionsBot: true });
    expect(cmd('/status')).toMatchObject({ text: '/status', mentionsBot: true });
    expect(cmd('/status@other_bot')).toMatchObject({ text: '/status@other_bot', mentionsBot: false });
  });

  it('uses the caption and its entities when there is no text', () => {
    const photo = [
      { file_id: 'small', file_unique_id: 's', width: 90, height: 60, file_size: 9000 },
      { file_id: 'big', file_unique_id: 'b', width: 1280, height: 853, file_size: 100 },
    ];
    const r = mapped(group({ caption: '@muninn_bot look', caption_entities: [mention(0, 11)], photo }));
    expect(r.message).toMatchObject({ text: 'look', mentionsBot: true });
    expect(r.media).toEqual({ fileId: 'big', fileSize: 100, mimeType: 'image/jpeg' });
  });

  it('takes an image sent as a file, but not other documents', () => {
    const png = mapped(msg({ document: { file_id: 'd1', file_unique_id: 'u', mime_type: 'image/png', file_size: 55 } }));
    expect(png.media).toEqual({ fileId: 'd1', fileSize: 55, mimeType: 'image/png' });
    expect(png.message.text).toBe('');
    expect(mapTelegramMessage(msg({ document: { file_id: 'd2', file_unique_id: 'u', mime_type: 'application/pdf' } }), BOT)).toEqual({ ok: false, reason: 'unsupported message (document)' });
  });

  it('skips stickers, voice notes, service messages, bots and messages without a sender, without throwing', () => {
    expect(mapTelegramMessage(msg({ sticker: { file_id: 's' } }), BOT)).toEqual({ ok: false, reason: 'unsupported message (sticker)' });
    expect(mapTelegramMessage(msg({ voice: { file_id: 'v' } }), BOT)).toEqual({ ok: false, reason: 'unsupported message (voice)' });
    expect(mapTelegramMessage(group({ new_chat_members: [ADA] }), BOT)).toEqual({ ok: false, reason: 'unsupported message (no text)' });
    expect(mapTelegramMessage(msg({ text: 'beep', from: { id: 9, is_bot: true, first_name: 'B' } }), BOT)).toEqual({ ok: false, reason: 'sent by a bot' });
    expect(mapTelegramMessage(msg({ text: 'anon', from: undefined }), BOT)).toEqual({ ok: false, reason: 'no sender' });
    expect(mapTelegramMessage({} as Message, BOT)).toEqual({ ok: false, reason: 'chat type undefined' });
  });
});

describe('stripBotMentions', () => {
  it('handles several mentions and UTF-16 offsets (emoji before the mention)', () => {
    const text = '👋 @muninn_bot and @muninn_bot again';
    const entities = [mention(3, 11), mention(19, 11)];
    expect(stripBotMentions(text, entities as never, BOT)).toEqual({ text: '👋 and again', mentioned: true });
  });

  it('ignores entities outside the text', () => {
    expect(stripBotMentions('short', [mention(3, 20)] as never, BOT)).toEqual({ text: 'short', mentioned: false });
  });
});
