import type { WAMessage } from '@whiskeysockets/baileys';
import { mapInbound, normalizeJid, selfIdentity, type MappedInbound } from '../../../../server/channels/whatsapp/whatsapp.mapper';

const BOT_PN = '4915100000001';
const BOT_LID = '987654321012345';
const self = selfIdentity({ id: `${BOT_PN}:7@s.whatsapp.net`, lid: `${BOT_LID}:7@lid` });
const GROUP = '120363000000000001@g.us';
const ALICE_PN = '4917600000002@s.whatsapp.net';
const ALICE_LID = '111122223333444@lid';

function msg(partial: Partial<WAMessage> & { key: WAMessage['key'] }): WAMessage {
  return { messageTimestamp: 1_767_225_600, pushName: 'Alice', ...partial } as WAMessage;
}

function mapped(m: MappedInbound) {
  if (m.kind !== 'message') throw new Error(`skipped: ${m.reason}`);
  return m;
}

describe('normalizeJid', () => {
  it('drops device and agent suffixes and maps c.us to s.whatsapp.net', () => {
    expect(normalizeJid('4915100000001:12@s.whatsapp.net')).toBe('4915100000001@s.whatsapp.net');
    expect(normalizeJid('987654321012345:3@lid')).toBe('987654321012345@lid');
    expect(normalizeJid('4915100000001_1:2@c.us')).toBe('4915100000001@s.whatsapp.net');
    expect(normalizeJid('not-a-jid')).toBe('');
    expect(normalizeJid(undefined)).toBe('');
  });
});

describe('mapInbound', () => {
  it('maps a DM with conversation text', () => {
    const { message, image } = mapped(mapInbound(msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'M1' }, message: { conversation: '  hello bot ' } }), self));
    expect(message).toEqual({
      channel: 'whatsapp',
      chatId: ALICE_PN,
      chatKind: 'dm',
      sender: { handle: ALICE_PN, displayName: 'Alice' },
      text: 'hello bot',
      mentionsBot: false,
      replyTo: null,
      platformMessageId: 'M1',
      receivedAt: new Date(1_767_225_600_000),
    });
    expect(image).toBeNull();
  });

  it('uses the phone-number JID as handle when a LID DM carries remoteJidAlt', () => {
    const { message } = mapped(mapInbound(msg({ key: { remoteJid: ALICE_LID, remoteJidAlt: ALICE_PN, fromMe: false, id: 'M2' }, message: { conversation: 'hi' } }), self));
    expect(message.chatId).toBe(ALICE_LID);
    expect(message.sender.handle).toBe(ALICE_PN);
  });

  it('maps a group message: chat is the group, sender the participant without device', () => {
    const { message } = mapped(
      mapInbound(msg({ key: { remoteJid: GROUP, participant: '4917600000002:4@s.whatsapp.net', fromMe: false, id: 'G1' }, message: { extendedTextMessage: { text: 'morning all' } } }), self),
    );
    expect(message).toMatchObject({ chatId: GROUP, chatKind: 'group', sender: { handle: ALICE_PN }, text: 'morning all', mentionsBot: false });
  });

  it('detects a LID mention and strips the @mention text', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_LID, participantAlt: ALICE_PN, fromMe: false, id: 'G2' },
      message: { extendedTextMessage: { text: `@${BOT_LID} what is the time?`, contextInfo: { mentionedJid: [`${BOT_LID}@lid`] } } },
    });
    const { message } = mapped(mapInbound(m, self));
    expect(message.mentionsBot).toBe(true);
    expect(message.text).toBe('what is the time?');
    expect(message.sender.handle).toBe(ALICE_PN);
  });

  it('detects a phone-number mention (with device suffix) and strips it mid-sentence', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'G3' },
      message: { extendedTextMessage: { text: `hey @${BOT_PN} and @4917699999999, look`, contextInfo: { mentionedJid: [`${BOT_PN}:7@s.whatsapp.net`, '4917699999999@s.whatsapp.net'] } } },
    });
    const { message } = mapped(mapInbound(m, self));
    expect(message.mentionsBot).toBe(true);
    expect(message.text).toBe('hey and @4917699999999, look');
  });

  it('does not count mentions of other people', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'G4' },
      message: { extendedTextMessage: { text: '@4917699999999 hi', contextInfo: { mentionedJid: ['4917699999999@s.whatsapp.net', `${BOT_PN}1@s.whatsapp.net`] } } },
    });
    expect(mapped(mapInbound(m, self)).message).toMatchObject({ mentionsBot: false, text: '@4917699999999 hi' });
  });

  it('counts a reply to one of the bot messages as a mention and records replyTo', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'G5' },
      message: { extendedTextMessage: { text: 'and tomorrow?', contextInfo: { stanzaId: 'BOTMSG1', participant: `${BOT_LID}@lid`, quotedMessage: { conversation: 'sunny' } } } },
    });
    expect(mapped(mapInbound(m, self)).message).toMatchObject({ mentionsBot: true, replyTo: 'BOTMSG1', text: 'and tomorrow?' });
  });

  it('a reply to someone else is not a mention', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'G6' },
      message: { extendedTextMessage: { text: 'agreed', contextInfo: { stanzaId: 'X', participant: '4917699999999@s.whatsapp.net' } } },
    });
    expect(mapped(mapInbound(m, self)).message).toMatchObject({ mentionsBot: false, replyTo: 'X' });
  });

  it('ignores own messages, status broadcasts, protocol messages and reactions', () => {
    const cases: Array<[WAMessage, string]> = [
      [msg({ key: { remoteJid: ALICE_PN, fromMe: true, id: 'O1' }, message: { conversation: 'mine' } }), 'own message'],
      [msg({ key: { remoteJid: 'status@broadcast', participant: ALICE_PN, fromMe: false, id: 'S1' }, message: { conversation: 'story' } }), 'broadcast'],
      [msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'P1' }, message: { protocolMessage: { type: 0 } } }), 'protocol message'],
      [msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'R1' }, message: { reactionMessage: { text: '👍' } } }), 'reaction'],
      [msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'E1' }, message: { conversation: '   ' } }), 'no text or image'],
    ];
    for (const [m, reason] of cases) expect(mapInbound(m, self)).toEqual({ kind: 'skip', reason });
  });

  it('maps an image with caption and reports the pending download', () => {
    const m = msg({
      key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'I1' },
      message: { imageMessage: { caption: `@${BOT_PN} what is this?`, mimetype: 'image/png', fileLength: 2048, contextInfo: { mentionedJid: [`${BOT_PN}@s.whatsapp.net`] } } },
    });
    const { message, image } = mapped(mapInbound(m, self));
    expect(message).toMatchObject({ text: 'what is this?', mentionsBot: true });
    expect(image).toEqual({ mimeType: 'image/png', declaredBytes: 2048 });
  });

  it('unwraps disappearing and view-once messages', () => {
    const m = msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'W1' }, message: { ephemeralMessage: { message: { viewOnceMessageV2: { message: { conversation: 'secret' } } } } } });
    expect(mapped(mapInbound(m, self)).message.text).toBe('secret');
  });

  it('skips malformed messages without throwing', () => {
    expect(mapInbound({} as WAMessage, self)).toMatchObject({ kind: 'skip', malformed: true });
    expect(mapInbound(null as unknown as WAMessage, self)).toMatchObject({ kind: 'skip', malformed: true });
    expect(mapInbound(msg({ key: { remoteJid: GROUP, fromMe: false, id: 'N1' }, message: { conversation: 'who?' } }), self)).toMatchObject({ kind: 'skip', malformed: true });
    expect(mapInbound(msg({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'N2' }, message: { conversation: 42 as unknown as string } }), self)).toMatchObject({
      kind: 'skip',
      malformed: true,
    });
  });

  it('works before the bot knows its own JIDs (no mention possible)', () => {
    const m = msg({ key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'U1' }, message: { extendedTextMessage: { text: '@123 hi', contextInfo: { mentionedJid: ['123@lid'] } } } });
    expect(mapped(mapInbound(m, selfIdentity(undefined))).message.mentionsBot).toBe(false);
  });
});
