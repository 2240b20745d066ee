import { GraphQLScalarType } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';

/** 1970-01-01 to 9999-12-31: where `Date#toISOString` writes a four-digit year, as isoString does. */
const LAST_MS = 253402300800000;

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** `date.toISOString()` for a time in [0, LAST_MS), about three times faster. */
export function isoString(date: Date): string {
  const ms = date.getUTCMilliseconds();
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : ms}Z`;
}

/**
 * graphql-scalars' DateTimeISO (same name, description, parsing and errors) whose answers for a valid Date
 * of 1970–9999 are formatted without `toISOString`, the largest cost of serializing a page of dated rows;
 * every other value goes to the original. Given to type-graphql as the scalar of `Date`.
 */
export const DateTimeISO = new GraphQLScalarType({
  ...GraphQLDateTimeISO.toConfig(),
  serialize(value) {
    if (value instanceof Date) {
      const time = value.getTime();
      if (time >= 0 && time < LAST_MS) return isoString(value);
    }
    return GraphQLDateTimeISO.serialize(value);
  },
});
