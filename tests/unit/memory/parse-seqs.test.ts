import { parseSeqs } from '../../../server/modules/memory/sqlite-vector-tables';

describe('parseSeqs (the seqs of a block of vector codes, as group_concat wrote them)', () => {
  it('reads one seq, several, and large ones, in order', () => {
    expect([...parseSeqs('7')]).toEqual([7]);
    expect([...parseSeqs('12,7,3051,0')]).toEqual([12, 7, 3051, 0]);
    expect([...parseSeqs('2147483647,100000')]).toEqual([2147483647, 100000]);
  });

  it('gives what split and Number give for many seqs', () => {
    const seqs = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 1_000_003);
    expect([...parseSeqs(seqs.join(','))]).toEqual(seqs);
  });
});
