/* eslint-disable @typescript-eslint/no-require-imports */
import { BREAK, Kind, visit, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type * as GraphQLJit from 'graphql-jit';

/** A query operation compiled to one function: the same resolvers, without graphql-js's walk per field. */
export type CompiledOperation = (contextValue: unknown, variables: Record<string, unknown>) => ExecutionResult | Promise<ExecutionResult>;

/** graphql-jit once loaded; false when it could not be (a checkout whose install predates it): graphql-js runs everything. */
let jit: typeof GraphQLJit | false | null = null;

function loadJit(): typeof GraphQLJit | false {
  if (jit === null) {
    try {
      jit = require('graphql-jit') as typeof GraphQLJit;
    } catch {
      jit = false;
    }
  }
  return jit;
}

/**
 * graphql-jit's code generator writes argument literals into its generated source with JSON.stringify,
 * then turns strings that hold its private markers (`__MAGIC_DATE__<uuid>…`, NaN, ±Infinity) back into
 * code: a literal carrying a marker would put the rest of the literal into the generated function as
 * code. Names cannot carry a quote but can carry a marker too, so the query text is checked as well as
 * every decoded string (escapes like `\u005f` are decoded by the parser, not in the text).
 */
const MARKER = 'MAGIC';

/**
 * Whether graphql-jit may compile this (parsed and validated) document: no text that could hold one of
 * its markers, and no directive. graphql-jit documents that its default handling of `@skip`/`@include`
 * on fragment spreads is being replaced; a document with a directive keeps graphql-js.
 */
export function compilable(query: string, document: DocumentNode): boolean {
  if (query.includes(MARKER)) return false;
  let ok = true;
  visit(document, {
    Directive() {
      ok = false;
      return BREAK;
    },
    StringValue(node) {
      if (node.value.includes(MARKER)) {
        ok = false;
        return BREAK;
      }
      return undefined;
    },
  });
  return ok;
}

/**
 * The operation compiled by graphql-jit (loaded on the first compilation: its JSON-schema dependencies
 * take ~0.1 s to load, which a start-up should not pay), or null when it declines the document. Results
 * with errors are the caller's to hand to the standard path: graphql-jit's errors are not graphql-js's
 * word for word. Only call this with a document that passed validation and `compilable`.
 */
export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined): CompiledOperation | null {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (operationName === undefined || d.name?.value === operationName));
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'query') return null;
  const loaded = loadJit();
  if (!loaded) return null;
  const { compileQuery, isCompiledQuery } = loaded;
  const compiled = (() => {
    try {
      // Stacks of errors are never shown (a result with errors goes to the standard path).
      return compileQuery(schema, document, operationName, { disablingCapturingStackErrors: true });
    } catch {
      return null;
    }
  })();
  if (!compiled || !isCompiledQuery(compiled)) return null;
  const query = compiled.query;
  return (contextValue, variables) => query(undefined, contextValue, variables);
}
