import 'reflect-metadata';
import { graphql, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { Authorized, buildSchema, Field, FieldResolver, ObjectType, Query, Resolver, Root, type ContainerType } from 'type-graphql';
import { markPlainFields } from '../../../server/graphql/plain-fields';

@ObjectType()
class Plain {
  @Field()
  name!: string;

  @Field({ name: 'label' })
  text!: string;

  @Field()
  get shout(): string {
    return this.name.toUpperCase();
  }

  @Field()
  computed!: string;
}

@ObjectType()
class Guarded {
  @Field()
  open!: string;

  @Authorized('ADMIN')
  @Field()
  secret!: string;
}

@ObjectType()
class Base {
  @Field()
  inherited!: string;
}

@ObjectType()
class Derived extends Base {
  @Authorized('ADMIN')
  @Field()
  own!: string;
}

@Resolver(() => Plain)
class TestResolver {
  @Query(() => Plain)
  plain(): Plain {
    return Object.assign(new Plain(), { name: 'ann', text: 'T' });
  }

  @Query(() => Guarded)
  guarded(): Guarded {
    return { open: 'o', secret: 's' };
  }

  @Query(() => Derived)
  derived(): Derived {
    return { inherited: 'i', own: 'x' };
  }

  @FieldResolver(() => String)
  computed(@Root() p: Plain): string {
    return `${p.name}!`;
  }
}

describe('markPlainFields', () => {
  let schema: GraphQLSchema;
  const resolver = new TestResolver();
  beforeAll(async () => {
    markPlainFields();
    schema = await buildSchema({
      resolvers: [TestResolver],
      container: { get: () => resolver } as unknown as ContainerType,
      authChecker: ({ context }, roles) => roles.every((r) => (context as { roles: string[] }).roles.includes(r)),
      authMode: 'error',
    });
  });
  const fieldsOf = (type: string) => (schema.getType(type) as GraphQLObjectType).getFields();

  it('leaves a field that only reads its property without a resolver of its own', () => {
    expect(fieldsOf('Plain').name!.resolve).toBeUndefined();
  });

  it('keeps the resolver of a renamed field, a getter and a field resolver (type-graphql’s own), and every field of a class with @Authorized (its parents too)', () => {
    expect(fieldsOf('Plain').label!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Plain').shout!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Plain').computed!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Guarded').open!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Guarded').secret!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Derived').own!.resolve).toBeInstanceOf(Function);
    expect(fieldsOf('Derived').inherited!.resolve).toBeInstanceOf(Function);
  });

  it('answers as before, and a guarded field is still refused', async () => {
    const ok = await graphql({ schema, source: '{ plain { name label shout computed } }', contextValue: { roles: [] } });
    expect(ok).toEqual({ data: { plain: { name: 'ann', label: 'T', shout: 'ANN', computed: 'ann!' } } });
    const refused = await graphql({ schema, source: '{ guarded { open secret } }', contextValue: { roles: [] } });
    expect(refused.errors?.[0]?.message).toMatch(/Access denied/);
    const admin = await graphql({ schema, source: '{ guarded { open secret } derived { inherited own } }', contextValue: { roles: ['ADMIN'] } });
    expect(admin).toEqual({ data: { guarded: { open: 'o', secret: 's' }, derived: { inherited: 'i', own: 'x' } } });
  });
});
