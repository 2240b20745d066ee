import { prettyLine, createLogger } from '../../server/common/logger';
import { SecretRedactor } from '../../server/common/secret-redactor';
import { QueryFailedError } from 'typeorm';
import { LogCapture } from '../support/log-capture';

describe('logger', () => {
  it('formats JSON lines for a terminal', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5), app: 'muninn', msg: 'careful', module: 'redis', port: 6379 });
    expect(prettyLine(line)).toBe('03:04:05 WARN  careful  module=redis port=6379\n');
    expect(prettyLine('not json')).toBe('not json');
  });

  it('redacts registered secrets and token-shaped strings in JSON and pretty output', () => {
    for (const pretty of [false, true]) {
      const capture = new LogCapture();
      const redactor = new SecretRedactor();
      redactor.add('super-secret-value');
      const logger = createLogger({ destination: capture, redactor, pretty });
      logger.info({ note: 'key super-secret-value here' }, 'token mun_abcdefghijklmnopqrstuvwxyz0123456789 used');
      logger.flush();
      expect(capture.text).toContain('[REDACTED]');
      expect(capture.text).not.toContain('super-secret-value');
      expect(capture.text).not.toContain('mun_abcdefghijklmnopqrstuvwxyz0123456789');
    }
  });

  it('keeps what people wrote out of logged errors: SQL parameters of a failed query, request bodies, nested causes', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, redactor: new SecretRedactor() });
    const driver = Object.assign(new Error('SQLITE_CONSTRAINT: NOT NULL constraint failed: messages.sessionId'), { code: 'SQLITE_CONSTRAINT' });
    const failed = new QueryFailedError('INSERT INTO "messages"("id", "content") VALUES (?, ?)', ['m1', 'my private diary entry'], driver);
    logger.warn({ err: failed }, 'turn failed');
    logger.error({ err: new Error('request failed', { cause: Object.assign(new Error('bad'), { body: '{"text":"call my doctor"}' }) }) }, 'x');
    logger.flush();
    expect(capture.text).toContain('NOT NULL constraint failed');
    expect(capture.text).toContain('INSERT INTO');
    expect(capture.text).not.toContain('my private diary entry');
    expect(capture.text).not.toContain('call my doctor');
    expect(capture.text).toContain('[content omitted]');
  });
});
