/**
 * The class-validator decorators the GraphQL arguments use, and the check of them, each required from its
 * own file: the package's index loads every decorator with validator.js and libphonenumber-js (≈ 200
 * files, ≈ 0.4 s of every start). They share the package's one metadata storage (a global), so the rules
 * and the check are exactly the index's. A new decorator is added here, with its file.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import type * as ClassValidator from 'class-validator';

type Api = typeof ClassValidator;

function fromFile<K extends keyof Api>(file: string, name: K): Api[K] {
  return (require(`class-validator/cjs/${file}`) as Pick<Api, K>)[name];
}

export const Length = fromFile('decorator/string/Length', 'Length');
export const MaxLength = fromFile('decorator/string/MaxLength', 'MaxLength');
export const Min = fromFile('decorator/number/Min', 'Min');
export const Max = fromFile('decorator/number/Max', 'Max');
export const ValidateNested = fromFile('decorator/common/ValidateNested', 'ValidateNested');

const { Validator } = require('class-validator/cjs/validation/Validator') as Pick<Api, 'Validator'>;
const { getFromContainer } = require('class-validator/cjs/container') as Pick<Api, 'getFromContainer'>;

/** class-validator's `validateOrReject(object, options)`: the same validator instance the index uses. */
export function validateOrReject(object: object, options?: ClassValidator.ValidatorOptions): Promise<void> {
  return getFromContainer(Validator).validateOrReject(object, options);
}
