import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSkillFile, SkillFileError } from '../../../server/modules/skills';

const ok = (front: string, body = 'Do the thing.') => `---\n${front}\n---\n${body}\n`;

describe('parseSkillFile', () => {
  it('reads the front matter with defaults: min_trust MEMBER, all channels', () => {
    const def = parseSkillFile('notes', ok('description: Take notes'));
    expect(def).toMatchObject({ name: 'notes', description: 'Take notes', readWhen: null, minTrust: 'MEMBER', channels: [], body: 'Do the thing.' });
    expect(def.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('accepts every key, trust in any case, channels as a list or one name', () => {
    const def = parseSkillFile('trip', ok('name: trip\ndescription: Pack\nread_when: travel\nmin_trust: trusted\nchannels: [Telegram, web, telegram]'));
    expect(def).toMatchObject({ name: 'trip', readWhen: 'travel', minTrust: 'TRUSTED', channels: ['telegram', 'web'] });
    expect(parseSkillFile('trip', ok('description: Pack\nchannels: whatsapp')).channels).toEqual(['whatsapp']);
  });

  it.each([
    ['no front matter', 'just text', /no front matter: start the file with a line "---"/],
    ['invalid YAML', ok('description: [unclosed'), /not valid YAML/],
    ['a missing description', ok('min_trust: MEMBER'), /"description"/],
    ['an unknown key', ok('description: x\ncolour: red'), /remove colour \(known keys: name, description, read_when, min_trust, channels\)/],
    ['a bad trust level', ok('description: x\nmin_trust: BOSS'), /"min_trust": use one of BLOCKED, GUEST, MEMBER, TRUSTED, ADMIN, OWNER/],
    ['a name that differs from the folder', ok('name: other\ndescription: x'), /name "other" differs from its folder "notes"/],
    ['an empty body', ok('description: x', ''), /the body is empty/],
  ])('rejects %s with how to fix it', (_what, text, message) => {
    expect(() => parseSkillFile('notes', text)).toThrow(SkillFileError);
    expect(() => parseSkillFile('notes', text)).toThrow(message);
  });

  it('rejects a folder that is not a valid skill name', () => {
    expect(() => parseSkillFile('My Skill', ok('description: x'))).toThrow(/folder "My Skill" is not a valid skill name/);
  });

  it('the shipped example skills parse', () => {
    const root = path.join(__dirname, '../../../plugins/skills');
    const names = readdirSync(root).sort();
    expect(names).toEqual(['daily-briefing', 'meeting-notes', 'trip-checklist']);
    for (const name of names) {
      const def = parseSkillFile(name, readFileSync(path.join(root, name, 'SKILL.md'), 'utf8'));
      expect(def.readWhen).toBeTruthy();
      expect(def.body.length).toBeGreaterThan(200);
    }
  });
});
