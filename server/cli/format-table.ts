/**
 * Renders rows as a plain-text table: a header row, columns padded to their widest cell, two spaces
 * between columns and no trailing spaces.
 *
 * @example
 * formatTable(['ID', 'NAME'], [['1', 'Ada']]) // "ID  NAME\n1   Ada"
 */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
