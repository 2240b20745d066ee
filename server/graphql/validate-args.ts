import type { ValidationError, ValidatorOptions } from 'class-validator';
import { validateOrReject } from './validators';
import { ArgumentValidationError, type ValidatorFn } from 'type-graphql';

const OPTIONS: ValidatorOptions = { forbidUnknownValues: false, skipMissingProperties: true };

const validatable = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * Checks the class-validator rules of object arguments (inputs and `@Args` classes) as type-graphql's own
 * `validate: { forbidUnknownValues: false }` does, with the same ArgumentValidationError, but with
 * class-validator loaded once: type-graphql's built-in check requires the module on every argument.
 */
export const validateArgs: ValidatorFn = async (value) => {
  if (!validatable(value)) return;
  try {
    if (Array.isArray(value)) await Promise.all(value.filter(validatable).map((item) => validateOrReject(item, OPTIONS)));
    else await validateOrReject(value, OPTIONS);
  } catch (err) {
    throw new ArgumentValidationError(err as ValidationError[]);
  }
};
