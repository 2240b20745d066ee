import {
  execute,
  getOperationAST,
  getVariableValues,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import type { Logger } from '../common/logger';
import { compilable, compileOperation, type CompiledOperation } from '../graphql/compiled-query';
import type { GraphQLContext } from '../graphql/context';
import { usesIntrospection } from './operation-guard';

/** A document that parsed and passed every validation rule, ready to execute again. */
interface Prepared {
  document: DocumentNode;
  /** The operation when the document has exactly one; null when the request must name it. */
  single: OperationDefinitionNode | null;
  introspection: boolean;
  /** Whether graphql-jit may compile it (see compilable). */
  compilable: boolean;
  /** Requests that ran it, up to COMPILE_AT. */
  runs: number;
  /** Its operations compiled, by name ('' for the single one); null where graphql-jit declined. */
  compiled: Map<string, CompiledOperation | null>;
}

/** A query text is compiled when it runs for this time: a text sent once is not worth compiling. */
const COMPILE_AT = 3;

/** How many distinct query texts are kept, and the longest one kept. */
const MAX_DOCUMENTS = 500;
const MAX_QUERY_CHARS = 20_000;

export interface QueryFastPath {
  /**
   * The answer body (Apollo's: `{"data":…}` and a newline) of a query that ran without an error, or null
   * when Apollo must answer the request: not a plain `{ query, variables?, operationName? }` body, a
   * document that does not parse or validate, a mutation or subscription, introspection, or a result
   * with errors (a query reads only, so running it again through Apollo is harmless).
   */
  run(body: unknown, context: () => Promise<GraphQLContext>): Promise<string | null>;
}

/**
 * Queries by the text they were sent with, parsed and validated once (the same parser limit and rules
 * as Apollo's), executed with graphql-js directly: a repeated read (`me`, a page of sessions) skips
 * Apollo's request pipeline (query hash, document store, plugin hooks, content negotiation), which
 * cost more than a small query itself. Apollo's answer and this one are the same bytes.
 */
export function createQueryFastPath(options: { schema: GraphQLSchema; validationRules: readonly ValidationRule[]; maxTokens: number; logger: Logger }): QueryFastPath {
  const { schema, logger } = options;
  const rules = [...specifiedRules, ...options.validationRules];
  const documents = new Map<string, Prepared | null>();

  function prepare(query: string): Prepared | null {
    const known = documents.get(query);
    if (known !== undefined) return known;
    let prepared: Prepared | null = null;
    try {
      const document = parse(query, { maxTokens: options.maxTokens });
      if (!validate(schema, document, rules).length) {
        const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
        prepared = {
          document,
          single: operations.length === 1 ? operations[0]! : null,
          introspection: usesIntrospection(document),
          compilable: compilable(query, document),
          runs: 0,
          compiled: new Map(),
        };
      }
    } catch {
      prepared = null;
    }
    if (documents.size >= MAX_DOCUMENTS) documents.delete(documents.keys().next().value!);
    documents.set(query, prepared);
    return prepared;
  }

  /** The compiled operation once the text has run often enough, else null (graphql-js runs it). */
  function compiledOf(prepared: Prepared, operationName: string | undefined): CompiledOperation | null {
    if (!prepared.compilable) return null;
    if (prepared.runs < COMPILE_AT && ++prepared.runs < COMPILE_AT) return null;
    const key = operationName ?? '';
    let compiled = prepared.compiled.get(key);
    if (compiled === undefined) {
      compiled = compileOperation(schema, prepared.document, operationName);
      prepared.compiled.set(key, compiled);
    }
    return compiled;
  }

  return {
    async run(body, context) {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
      const { query, variables, operationName, ...rest } = body as Record<string, unknown>;
      if (typeof query !== 'string' || query.length > MAX_QUERY_CHARS || Object.keys(rest).some((k) => (rest[k] ?? null) !== null)) return null;
      if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return null;
      if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return null;
      const prepared = prepare(query);
      if (!prepared || prepared.introspection) return null;
      const operation = operationName ? getOperationAST(prepared.document, operationName) : prepared.single;
      if (!operation || operation.operation !== 'query') return null;
      const started = Date.now();
      let contextValue: GraphQLContext;
      try {
        contextValue = await context();
      } catch {
        return null; // Apollo builds it again and answers the failure its way
      }
      const variableValues = (variables ?? undefined) as Record<string, unknown> | undefined;
      const compiled = compiledOf(prepared, operationName ?? undefined);
      // graphql-jit coerces variables itself; graphql-js's coercion decides which values are refused.
      if (compiled && operation.variableDefinitions?.length && getVariableValues(schema, operation.variableDefinitions, variableValues ?? {}).errors) return null;
      const result: ExecutionResult = compiled
        ? await compiled(contextValue, variableValues ?? {})
        : await execute({ schema, document: prepared.document, contextValue, variableValues, operationName: operationName ?? undefined });
      if (result.errors?.length) return null;
      logger.debug({ transport: 'http', operation: operation.name?.value ?? null, type: 'query', userId: contextValue.ctx.userId ?? null, ms: Date.now() - started }, 'graphql operation');
      return `${JSON.stringify({ data: result.data })}\n`;
    },
  };
}
