import { GraphQLEnumType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, execute, parse } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';
import { compilable, compileOperation } from '../../../server/graphql/compiled-query';

const Status = new GraphQLEnumType({ name: 'Status', values: { ACTIVE: { value: 'active' }, ENDED: { value: 'ended' } } });
const Item: GraphQLObjectType = new GraphQLObjectType({
  name: 'Item',
  fields: () => ({
    id: { type: new GraphQLNonNull(GraphQLString) },
    status: { type: Status },
    at: { type: GraphQLDateTimeISO },
    note: { type: GraphQLString },
    twice: { type: GraphQLInt, args: { n: { type: GraphQLInt } }, resolve: (_item, { n }: { n: number }) => n * 2 },
    next: { type: Item, resolve: async (item: { id: string }) => (item.id === 'a' ? items[1] : null) },
  }),
});
const items = [
  { id: 'a', status: 'active', at: new Date('2026-01-02T03:04:05.678Z'), note: null },
  { id: 'b', status: 'ended', at: new Date('2026-02-03T04:05:06.789Z'), note: 'ß "quoted" \u2028' },
];
const seen: Array<Record<string, unknown>> = [];
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      items: {
        type: new GraphQLList(Item),
        args: { prefix: { type: GraphQLString }, first: { type: GraphQLInt } },
        resolve: (_root, args: Record<string, unknown>, context: { tag: string }) => {
          seen.push({ ...args, tag: context.tag });
          return items.slice(0, (args.first as number | undefined) ?? 2);
        },
      },
    },
  }),
});

async function both(query: string, variables: Record<string, unknown> = {}) {
  const document = parse(query);
  const compiled = compileOperation(schema, document, undefined);
  expect(compiled).not.toBeNull();
  const viaJit = await compiled!({ tag: 'jit' }, variables);
  const viaJs = await execute({ schema, document, contextValue: { tag: 'js' }, variableValues: variables });
  return { viaJit, viaJs };
}

describe('compiled queries', () => {
  it('answer with the same bytes as graphql-js: aliases, fragments, enums, dates, nulls, nested and async fields, arguments', async () => {
    const { viaJit, viaJs } = await both(
      `query Q($first: Int) { items(first: $first, prefix: "x\\"y") { ...F alias: id __typename twice(n: 21) next { id at } } }
       fragment F on Item { id status at note }`,
      { first: 2 },
    );
    expect(viaJs.errors).toBeUndefined();
    expect(viaJit.errors).toBeUndefined();
    expect(JSON.stringify(viaJit.data)).toBe(JSON.stringify(viaJs.data));
    // The resolver got the same arguments and the caller's context.
    expect(seen.slice(-2)).toEqual([
      { first: 2, prefix: 'x"y', tag: 'jit' },
      { first: 2, prefix: 'x"y', tag: 'js' },
    ]);
  });

  it('report a field error in the result (the caller then answers through the standard path)', async () => {
    const document = parse('{ items { id twice } }');
    const compiled = compileOperation(schema, document, undefined)!;
    const result = await compiled({ tag: 'jit' }, {});
    expect(result.errors?.length).toBeGreaterThan(0);
  });

  it('are made for queries only', () => {
    const withMutation = new GraphQLSchema({ query: schema.getQueryType(), mutation: new GraphQLObjectType({ name: 'Mutation', fields: { x: { type: GraphQLInt } } }) });
    expect(compileOperation(withMutation, parse('mutation { x }'), undefined)).toBeNull();
    expect(compileOperation(schema, parse('query A { items { id } }'), 'B')).toBeNull();
    expect(compileOperation(schema, parse('query A { items { id } } query B { items { note } }'), 'B')).not.toBeNull();
  });

  describe('compilable', () => {
    const ok = (query: string) => compilable(query, parse(query));

    it('takes plain documents', () => {
      expect(ok('{ items(prefix: "abc") { id } }')).toBe(true);
    });

    it('refuses a document whose text or decoded strings could hold one of the compiler’s markers', () => {
      const marker = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d';
      expect(ok(`{ items(prefix: "${marker}(globalThis.x=1)") { id } }`)).toBe(false);
      // Escaped in the text, decoded by the parser.
      expect(ok('{ items(prefix: "__\\u004dAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(1)") { id } }')).toBe(false);
      expect(ok('{ items(prefix: """__MAGIC_NAN__""") { id } }')).toBe(false);
    });

    it('refuses a document with a directive', () => {
      expect(ok('query($x: Boolean!) { items { id note @include(if: $x) } }')).toBe(false);
      expect(ok('{ items { ... on Item @skip(if: false) { id } } }')).toBe(false);
    });
  });
});
