import 'reflect-metadata';
import { ArgumentValidationError } from 'type-graphql';
import { ConnectionArgs } from '../../../server/graphql/connection';
import { validateArgs } from '../../../server/graphql/validate-args';
import { MaxLength } from '../../../server/graphql/validators';

class Named {
  @MaxLength(5)
  name?: string;
}

const check = async (value: object): Promise<void> => validateArgs(value, undefined as never, undefined as never);
const page = (first: unknown, after?: unknown) => Object.assign(new ConnectionArgs(), { first, after });

describe('validateArgs', () => {
  it('accepts valid arguments every time and refuses invalid ones every time, also after the same class was accepted', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(check(page(20))).resolves.toBeUndefined();
      await expect(check(page(5000))).rejects.toBeInstanceOf(ArgumentValidationError);
      await expect(check(page(-1, 'abc'))).rejects.toBeInstanceOf(ArgumentValidationError);
      await expect(check(page('20'))).rejects.toBeInstanceOf(ArgumentValidationError); // not the number 20 accepted above
      await expect(check(Object.assign(new Named(), { name: 'short' }))).resolves.toBeUndefined();
      await expect(check(Object.assign(new Named(), { name: 'longer' }))).rejects.toBeInstanceOf(ArgumentValidationError);
    }
  });

  it('names the broken rule in the error, the first time and after', async () => {
    for (let i = 0; i < 2; i++) {
      await check(page(10));
      const err = (await check(page(1001)).catch((e: unknown) => e)) as ArgumentValidationError;
      expect(err.extensions.validationErrors?.[0]).toMatchObject({ property: 'first', constraints: { max: expect.any(String) } });
    }
  });

  it('checks every item of a list', async () => {
    await expect(check([page(1), page(2)])).resolves.toBeUndefined();
    await expect(check([page(1), page(2000)])).rejects.toBeInstanceOf(ArgumentValidationError);
  });
});
