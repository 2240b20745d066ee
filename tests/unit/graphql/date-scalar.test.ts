import { GraphQLDateTimeISO } from 'graphql-scalars';
import { DateTimeISO, isoString } from '../../../server/graphql/date-scalar';

describe('DateTimeISO', () => {
  it('formats dates of 1970–9999 as toISOString does', () => {
    const times = [0, 1, 9, 10, 99, 100, 999, 86_399_999, Date.UTC(2026, 11, 6, 9, 5, 7, 42), 253402300799999];
    for (let i = 0; i < 20_000; i++) times.push(Math.floor(Math.random() * 253402300800000));
    for (const time of times) expect(isoString(new Date(time))).toBe(new Date(time).toISOString());
  });

  it('serializes every value as graphql-scalars’ DateTimeISO does, errors included', () => {
    const values: unknown[] = [new Date(0), new Date('2026-12-06T09:26:04.114Z'), new Date(-1), new Date('0100-01-01T00:00:00Z'), new Date(253402300800000), '2026-12-06T09:26:04.114Z', 1_700_000_000_000];
    for (const value of values) expect(DateTimeISO.serialize(value)).toBe(GraphQLDateTimeISO.serialize(value));
    for (const bad of [new Date(Number.NaN), 'yesterday', {}, null]) {
      expect(() => DateTimeISO.serialize(bad)).toThrow((() => {
        try {
          GraphQLDateTimeISO.serialize(bad);
        } catch (err) {
          return (err as Error).message;
        }
        throw new Error('the original accepted it');
      })());
    }
  });

  it('keeps the original’s name, description and parsing', () => {
    expect(DateTimeISO.name).toBe(GraphQLDateTimeISO.name);
    expect(DateTimeISO.description).toBe(GraphQLDateTimeISO.description);
    expect(DateTimeISO.parseValue('2026-12-06T09:26:04.114Z')).toEqual(GraphQLDateTimeISO.parseValue('2026-12-06T09:26:04.114Z'));
  });
});
