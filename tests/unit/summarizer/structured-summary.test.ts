import { findIdentifiers, hasAllSections, normalizeSummary, parseSummarySections, SUMMARY_SECTIONS } from '../../../server/modules/summarizer';

describe('structured compaction summary', () => {
  it('rearranges any heading style into the five sections, in order, filling missing ones', () => {
    const model = ['Here is the summary.', '', '**Open tasks:**', '- Write tests', '1. Decisions', '- Ship on Monday', '### Exact identifiers', '- `deploy.sh`'].join('\n');
    const out = normalizeSummary(model, 'run `deploy.sh` please');
    expect(hasAllSections(out)).toBe(true);
    expect(out).toBe(
      [
        'Here is the summary.',
        '',
        '## Decisions',
        '- Ship on Monday',
        '',
        '## Open tasks',
        '- Write tests',
        '',
        '## Constraints',
        '- none',
        '',
        '## Pending asks',
        '- none',
        '',
        '## Exact identifiers',
        '- `deploy.sh`',
      ].join('\n'),
    );
  });

  it('adds identifiers of the transcript the model left out, once each', () => {
    const transcript = 'See https://example.com/a/b?x=1, ticket OPS-42, file ./src/app.ts, id 123e4567-e89b-12d3-a456-426614174000, mail ops@example.org, order 9876543 and `make deploy`. Again OPS-42.';
    expect(findIdentifiers(transcript)).toEqual([
      'https://example.com/a/b?x=1',
      'OPS-42',
      './src/app.ts',
      '123e4567-e89b-12d3-a456-426614174000',
      'ops@example.org',
      '9876543',
      'make deploy',
    ]);
    const out = normalizeSummary('## Decisions\n- none\n## Exact identifiers\n- OPS-42', transcript);
    const identifiers = out.slice(out.indexOf('## Exact identifiers'));
    expect(identifiers.match(/OPS-42/g)).toHaveLength(1);
    expect(identifiers).toContain('- `https://example.com/a/b?x=1`');
    expect(identifiers).toContain('- `make deploy`');
    expect(out).toMatch(/## Decisions\n- none\n/);
  });

  it('keeps free text when the model wrote no headings at all, and still has every section', () => {
    const out = normalizeSummary('We talked about the weather.', 'nothing special');
    expect(out.startsWith('We talked about the weather.')).toBe(true);
    expect(hasAllSections(out)).toBe(true);
    expect(parseSummarySections(out).sections.size).toBe(SUMMARY_SECTIONS.length);
  });
});
