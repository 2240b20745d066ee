import { z } from 'zod';
import { renderOutput, summarizeArgs } from '../../../server/modules/tools';
import { describeZodError, parseArgsJson } from '../../../server/modules/tools/tool-args';

describe('tool argument helpers', () => {
  it('summarizes arguments briefly, hiding secret-looking keys and nested values', () => {
    const summary = summarizeArgs({
      url: 'https://example.com/' + 'a'.repeat(100),
      password: 'hunter22',
      apiKey: 'sk-123456',
      headers: { Authorization: 'Bearer xyz' },
      list: [1, 2, 3],
      n: 3,
    });
    expect(summary).not.toContain('hunter22');
    expect(summary).not.toContain('sk-123456');
    expect(summary).not.toContain('Bearer');
    expect(summary).toContain('password=[redacted]');
    expect(summary).toContain('headers={1 keys}');
    expect(summary).toContain('list=[3 items]');
    expect(summary.length).toBeLessThanOrEqual(200);
    expect(summarizeArgs('x'.repeat(500)).length).toBeLessThanOrEqual(200);
  });

  it('caps output and says how much was cut', () => {
    expect(renderOutput('short', 10)).toBe('short');
    expect(renderOutput('0123456789abc', 10)).toBe('0123456789\n[truncated 3 chars]');
    expect(renderOutput({ a: 1 }, 100)).toBe('{"a":1}');
  });

  it('parses raw JSON arguments; empty means {}', () => {
    expect(parseArgsJson('')).toEqual({ ok: true, value: {} });
    expect(parseArgsJson(' {"a":1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArgsJson('{a')).toMatchObject({ ok: false, error: expect.stringContaining('not valid JSON') });
  });

  it('names the bad fields of a zod error', () => {
    const r = z.object({ a: z.string(), b: z.object({ c: z.number() }) }).safeParse({ a: 1, b: { c: 'x' } });
    expect(r.success).toBe(false);
    const text = describeZodError(r.error!);
    expect(text).toMatch(/^a: .*; b\.c: /);
  });
});
