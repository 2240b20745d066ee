import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { ArgsType, Field, Int, ObjectType, type ClassType } from 'type-graphql';
import { Max, Min } from './validators';
import { encodeCursor, type Page } from '../common/pagination';

@ObjectType()
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

/** `first` / `after` of every Relay connection field. */
@ArgsType()
export class ConnectionArgs {
  @Field(() => Int, { nullable: true, description: 'Page size (default 50).' })
  @Min(0)
  @Max(1000)
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'Cursor of the last edge of the previous page.' })
  after?: string | null;
}

export interface ConnectionShape<T> {
  edges: Array<{ node: T; cursor: string }>;
  pageInfo: PageInfo;
  totalCount: number;
}

/** Builds `<Name>Edge` and `<Name>Connection` object types for a node type. */
export function Connection<T extends object>(nodeType: ClassType<T>, name = nodeType.name): ClassType<ConnectionShape<T>> {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field(() => nodeType)
    node!: T;

    @Field()
    cursor!: string;
  }

  @ObjectType(`${name}Connection`)
  class ConnectionType {
    @Field(() => [Edge])
    edges!: Edge[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;

    @Field(() => Int)
    totalCount!: number;
  }
  return ConnectionType;
}

/** Turns a page of rows into a connection. */
export function toConnection<T extends { id: string }>(page: Page<T>): ConnectionShape<T> {
  const edges = page.nodes.map((node) => ({ node, cursor: encodeCursor(node.id) }));
  return {
    edges,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.length ? edges[edges.length - 1]!.cursor : null },
    totalCount: page.totalCount,
  };
}

/** The fields of selection sets, through inline fragments and fragment spreads; null for an unknown fragment. */
function fieldsOf(sets: readonly SelectionSetNode[], info: GraphQLResolveInfo): FieldNode[] | null {
  const out: FieldNode[] = [];
  const pending = [...sets];
  while (pending.length) {
    for (const selection of pending.pop()!.selections) {
      if (selection.kind === Kind.FIELD) out.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else {
        const fragment = info.fragments[selection.name.value];
        if (!fragment) return null;
        pending.push(fragment.selectionSet);
      }
    }
  }
  return out;
}

/**
 * Names of the fields the query selects at `path` below the field being resolved (e.g. `edges`, `node`),
 * through fragments and whatever their directives say (so a field it names may go unused, never the
 * other way round), without `__typename`; null when it cannot tell.
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[]): string[] | null {
  // A compiled query passes the same field nodes (and fragments) on every run: the answer is kept with them.
  let known = selections.get(info.fieldNodes);
  if (!known) selections.set(info.fieldNodes, (known = new Map()));
  const key = path.join('.');
  let names = known.get(key);
  if (names === undefined) known.set(key, (names = selectedFieldsOf(info, path)));
  return names && [...names];
}

const selections = new WeakMap<GraphQLResolveInfo['fieldNodes'], Map<string, readonly string[] | null>>();

function selectedFieldsOf(info: GraphQLResolveInfo, path: readonly string[]): string[] | null {
  let sets = info.fieldNodes.flatMap((f) => (f.selectionSet ? [f.selectionSet] : []));
  for (const name of path) {
    const fields = fieldsOf(sets, info);
    if (!fields) return null;
    sets = fields.flatMap((f) => (f.name.value === name && f.selectionSet ? [f.selectionSet] : []));
  }
  const fields = fieldsOf(sets, info);
  return fields ? [...new Set(fields.map((f) => f.name.value))].filter((n) => n !== '__typename') : null;
}
