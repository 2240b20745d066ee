/**
 * Generators of hostile GraphQL requests for the fuzz suite, from a seeded PRNG (reproducible): random
 * operations built from the real schema with right and wrong argument values, depth, alias and fragment
 * bombs, huge lists and strings, unknown fields, batches, broken JSON, invalid UTF-8 and NUL bytes, and
 * protocol-violating graphql-ws frames.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isInterfaceType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';

export const SCHEMA: GraphQLSchema = buildSchema(readFileSync(path.resolve(__dirname, '../../../schema/schema.graphql'), 'utf8'));

/** Mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Fuzz {
  constructor(readonly rand: () => number) {}

  int(n: number): number {
    return Math.floor(this.rand() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  /** Strings a hostile client sends: empty, huge, NUL, unpaired surrogates, SQL and path tricks. */
  nastyString(): string {
    return this.pick([
      '',
      ' ',
      'x'.repeat(1 + this.int(100_000)),
      'a\u0000b',
      '\ud800',
      '\udfff\ud800',
      "' OR 1=1 --",
      '"; DROP TABLE users; --',
      '../../../../etc/passwd',
      '%00%ff',
      '${jndi:ldap://x}',
      '<script>alert(1)</script>',
      '🙂'.repeat(1 + this.int(2000)),
      'Bearer x',
      String(this.rand()),
      '\u202e\u0000\u001b[31m',
      JSON.stringify({ __proto__: { admin: true } }),
    ]);
  }

  /** Any JSON value, possibly deeply nested. */
  nastyValue(depth = 0): unknown {
    const k = this.int(depth > 3 ? 7 : 10);
    switch (k) {
      case 0:
        return null;
      case 1:
        return this.pick([0, -1, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, 0.5, Number.MAX_SAFE_INTEGER]);
      case 2:
        return this.chance(0.5);
      case 3:
      case 4:
        return this.nastyString();
      case 5:
        return String(this.int(1000));
      case 6:
        return { __proto__: null, constructor: { prototype: { x: 1 } } };
      case 7:
        if (depth === 0 && this.chance(0.1)) return Array.from({ length: 20_000 }, (_, i) => i);
        return Array.from({ length: this.int(5) }, () => this.nastyValue(depth + 1));
      default:
        return Object.fromEntries(Array.from({ length: this.int(5) }, () => [this.pick(['text', 'id', 'userId', 'trust', 'first', 'input', '__proto__']), this.nastyValue(depth + 1)]));
    }
  }

  /** A value for an input type: right most of the time, wrong now and then. */
  inputValue(type: GraphQLInputType, depth = 0): unknown {
    if (this.chance(0.15)) return this.nastyValue(depth);
    if (isNonNullType(type)) return this.inputValue(type.ofType, depth);
    if (isListType(type)) return Array.from({ length: this.int(3) }, () => this.inputValue(type.ofType, depth + 1));
    if (isEnumType(type)) return this.pick(type.getValues()).value as unknown;
    if (isInputObjectType(type)) {
      if (depth > 3) return {};
      return Object.fromEntries(Object.values(type.getFields()).filter(() => this.chance(0.8)).map((f) => [f.name, this.inputValue(f.type, depth + 1)]));
    }
    if (isScalarType(type)) {
      switch (type.name) {
        case 'Int':
          return this.pick([0, 1, 50, 200, 201, -5, 2 ** 31]);
        case 'Float':
          return this.rand() * 100;
        case 'Boolean':
          return this.chance(0.5);
        case 'DateTimeISO':
          return this.pick(['2026-01-01T00:00:00Z', 'yesterday', '1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59Z']);
        case 'JSON':
          return this.nastyValue(depth);
        default:
          return this.chance(0.5) ? this.nastyString() : `id-${this.int(100)}`;
      }
    }
    return null;
  }

  /** A selection set for a type, a few levels deep. */
  selection(type: GraphQLNamedType, depth: number): string {
    if (isUnionType(type) || isInterfaceType(type)) {
      const members = isUnionType(type) ? type.getTypes() : SCHEMA.getPossibleTypes(type);
      return `{ __typename ${members.filter(() => this.chance(0.5)).map((m) => `... on ${m.name} ${this.selection(m, depth + 1)}`).join(' ')} }`;
    }
    if (!isObjectType(type)) return '';
    const fields = Object.values(type.getFields());
    const chosen = fields.filter(() => this.chance(0.4));
    if (!chosen.length) chosen.push(this.pick(fields));
    const parts = chosen.map((f) => {
      const inner = getNamedType(f.type);
      const args = f.args.length && this.chance(0.3) ? `(${f.args.map((a) => `${a.name}: ${literal(this.inputValue(a.type))}`).join(', ')})` : '';
      if (isObjectType(inner) || isUnionType(inner) || isInterfaceType(inner)) {
        return depth > 3 ? '' : `${f.name}${args} ${this.selection(inner, depth + 1)}`;
      }
      return `${f.name}${args}`;
    });
    const body = parts.filter(Boolean).join(' ') || '__typename';
    return `{ ${body}${this.chance(0.05) ? ' notAField' : ''} }`;
  }

  /** A random operation on a root field of the schema, with variables. */
  schemaOperation(kind: 'query' | 'mutation' | 'subscription'): { query: string; variables: Record<string, unknown> } {
    const root = kind === 'query' ? SCHEMA.getQueryType()! : kind === 'mutation' ? SCHEMA.getMutationType()! : SCHEMA.getSubscriptionType()!;
    const field: GraphQLField<unknown, unknown> = this.pick(Object.values((root as GraphQLObjectType).getFields()));
    const variables: Record<string, unknown> = {};
    const defs: string[] = [];
    const args = field.args
      .filter((a) => isNonNullType(a.type) || this.chance(0.5))
      .map((a) => {
        if (this.chance(0.6)) {
          defs.push(`$${a.name}: ${a.type.toString()}`);
          if (!this.chance(0.05)) variables[a.name] = this.inputValue(a.type);
          return `${a.name}: $${a.name}`;
        }
        return `${a.name}: ${literal(this.inputValue(a.type))}`;
      });
    const inner = getNamedType(field.type);
    const sel = isObjectType(inner) || isUnionType(inner) || isInterfaceType(inner) ? this.selection(inner, 1) : '';
    const head = defs.length ? `${kind} Fuzz(${defs.join(', ')})` : kind;
    return { query: `${head} { ${field.name}${args.length ? `(${args.join(', ')})` : ''} ${sel} }`, variables };
  }

  /** Bombs and malformed documents. */
  bomb(): string {
    switch (this.int(9)) {
      case 0: {
        const n = 10 + this.int(200);
        return `{ ${'sessions { edges { node { user { '.repeat(n)}id${' } } } }'.repeat(n)} }`;
      }
      case 1:
        return `{ ${Array.from({ length: 20 + this.int(2000) }, (_, i) => `a${i}: me { id }`).join(' ')} }`;
      case 2:
        return `query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`;
      case 3: {
        const frags = Array.from({ length: 12 }, (_, i) => `fragment F${i} on Query { ${i === 11 ? 'me { id }' : `...F${i + 1} ...F${i + 1}`} }`);
        return `{ ...F0 } ${frags.join(' ')}`;
      }
      case 4:
        return `{ me { ${'id '.repeat(10 + this.int(20_000))}} }`;
      case 5:
        return '{'.repeat(1 + this.int(5000));
      case 6:
        return `{ me @skip(if: false) ${'@include(if: true) '.repeat(10 + this.int(500))} { id } }`;
      case 7:
        return `query Q(${Array.from({ length: 10 + this.int(500) }, (_, i) => `$v${i}: String`).join(', ')}) { me { id } }`;
      default:
        return `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } }`;
    }
  }

  /** A raw HTTP body (string or bytes) and content type that no well-behaved client sends. */
  rawBody(): { body: string | Buffer; contentType: string } {
    switch (this.int(8)) {
      case 0:
        return { body: '{ "query": ', contentType: 'application/json' };
      case 1:
        return { body: Buffer.from([0x7b, 0x22, 0x71, 0x75, 0x65, 0x72, 0x79, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), contentType: 'application/json' };
      case 2:
        return { body: JSON.stringify({ query: '{ me { id } }\u0000' }), contentType: 'application/json' };
      case 3:
        return { body: JSON.stringify(Array.from({ length: 1 + this.int(50) }, () => ({ query: '{ me { id } }' }))), contentType: 'application/json' };
      case 4:
        return { body: 'query=%7Bme%7Bid%7D%7D', contentType: 'application/x-www-form-urlencoded' };
      case 5:
        return { body: JSON.stringify({ query: '{ me { id } }' }), contentType: this.pick(['text/plain', 'application/graphql', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x']) };
      case 6:
        return { body: JSON.stringify(this.nastyValue()), contentType: 'application/json' };
      default:
        return { body: JSON.stringify({ query: this.nastyValue(), variables: this.nastyValue(), operationName: this.nastyValue(), extensions: this.nastyValue() }), contentType: 'application/json' };
    }
  }

  /** A graphql-transport-ws frame sequence that breaks the protocol. */
  wsFrames(token: string): Array<string | Buffer> {
    const init = JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
    const sub = (id: unknown, query: unknown = '{ me { id } }') => JSON.stringify({ id, type: 'subscribe', payload: { query } });
    switch (this.int(12)) {
      case 0:
        return [sub('1')];
      case 1:
        return [init, init];
      case 2:
        return [init, 'not json'];
      case 3:
        return [init, Buffer.from([0xff, 0x00, 0xfe])];
      case 4:
        return [init, JSON.stringify({ type: this.pick(['connection_ack', 'next', 'error', 'ka', 'start', 'stop', '']) })];
      case 5:
        return [init, sub('1'), sub('1')];
      case 6:
        return [init, JSON.stringify({ type: 'subscribe', payload: { query: '{ me { id } }' } })];
      case 7:
        return [init, sub(this.nastyValue(), this.nastyValue())];
      case 8:
        return [init, ...Array.from({ length: 50 }, (_, i) => sub(`s${i}`, `subscription { sessionEvents(sessionId: "nope-${i}") { __typename } }`))];
      case 9:
        return [init, sub('b', this.bomb())];
      case 10:
        return [JSON.stringify({ type: 'connection_init', payload: this.nastyValue() }), sub('x')];
      default: {
        const op = this.schemaOperation(this.pick(['query', 'mutation', 'subscription'] as const));
        return [init, JSON.stringify({ id: 'r', type: 'subscribe', payload: op })];
      }
    }
  }
}

/** A JS value as a GraphQL literal (strings JSON-quoted; objects as input objects). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '0';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.slice(0, 50).map(literal).join(', ')}]`;
  if (typeof value === 'object') {
    return `{ ${Object.entries(value as Record<string, unknown>)
      .filter(([k]) => /^[A-Za-z_]\w*$/.test(k))
      .map(([k, v]) => `${k}: ${literal(v)}`)
      .join(', ')} }`;
  }
  return 'null';
}
