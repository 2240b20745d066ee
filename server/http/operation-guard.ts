import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, visit, BREAK, type DocumentNode } from 'graphql';
import type { GraphQLContext } from '../graphql/context';

/** True when the document asks for the schema (`__schema` or `__type`); `__typename` is not introspection. */
export function usesIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * The refusal of introspection without an API token when `graphql.public_introspection` is off, or null
 * when the operation may run. A token of any trust may always introspect.
 */
export function introspectionRefusal(document: DocumentNode, context: GraphQLContext, publicIntrospection: boolean): GraphQLError | null {
  if (publicIntrospection || context.ctx.actor.kind !== 'anonymous' || !usesIntrospection(document)) return null;
  return new GraphQLError('Introspection needs an API token here (graphql.public_introspection is off).', {
    extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
  });
}

/**
 * Refuses, before execution, what HTTP cannot serve: a subscription (served over WebSocket only; graphql
 * would otherwise fail inside execution and answer INTERNAL_SERVER_ERROR) and anonymous introspection
 * when it is off. Each is a 4xx with a code.
 */
export function httpOperationGuard(publicIntrospection: boolean): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, contextValue }) {
          if (operation?.operation === 'subscription') {
            throw new GraphQLError('Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql, not over HTTP.', {
              extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
            });
          }
          const refused = introspectionRefusal(document, contextValue, publicIntrospection);
          if (refused) throw refused;
        },
      };
    },
  };
}
