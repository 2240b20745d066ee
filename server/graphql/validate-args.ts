import type { ValidationError, ValidatorOptions } from 'class-validator';
import { validateOrReject } from './validators';
import { ArgumentValidationError, type ValidatorFn } from 'type-graphql';

const OPTIONS: ValidatorOptions = { forbidUnknownValues: false, skipMissingProperties: true };

const validatable = (value: unknown): value is object => value !== null && typeof value === 'object';

/** Argument objects of only these values may be remembered as valid. */
const MAX_KEY_CHARS = 300;
const KEPT_PER_CLASS = 100;

/**
 * Argument values class-validator accepted, by class: `{ first: 20 }` of a page is checked on every
 * request with the same answer. Only objects whose own values are all primitives are kept (the rules
 * in validators.ts, Min, Max, Length and MaxLength, read nothing else; ValidateNested needs an object),
 * and only what passed: a refusal is always checked again, so its errors are class-validator's own.
 */
const accepted = new WeakMap<Function, Set<string>>();

/** An unambiguous key of an object of primitives (names, types and values), or null. */
function keyOf(value: object): string | null {
  const parts: unknown[] = [];
  for (const name of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[name];
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean' && v !== undefined) return null;
    parts.push(name, typeof v, v ?? null);
  }
  const key = JSON.stringify(parts);
  return key.length <= MAX_KEY_CHARS ? key : null;
}

async function validateOne(value: object): Promise<void> {
  const kept = accepted.get(value.constructor);
  const key = value.constructor === Object ? null : keyOf(value);
  if (key !== null && kept?.has(key)) return;
  await validateOrReject(value, OPTIONS);
  if (key === null) return;
  if (!kept) accepted.set(value.constructor, new Set([key]));
  else if (kept.size < KEPT_PER_CLASS) kept.add(key);
}

/**
 * Checks the class-validator rules of object arguments (inputs and `@Args` classes) as type-graphql's own
 * `validate: { forbidUnknownValues: false }` does, with the same ArgumentValidationError, but with
 * class-validator loaded once: type-graphql's built-in check requires the module on every argument.
 */
export const validateArgs: ValidatorFn = async (value) => {
  if (!validatable(value)) return;
  try {
    if (Array.isArray(value)) await Promise.all(value.filter(validatable).map((item) => validateOne(item)));
    else await validateOne(value);
  } catch (err) {
    throw new ArgumentValidationError(err as ValidationError[]);
  }
};
