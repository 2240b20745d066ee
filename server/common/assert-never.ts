/** Makes a switch over a union exhaustive: the compiler fails when a case is missing. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
