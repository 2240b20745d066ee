import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ApolloServerPlugin } from '@apollo/server';
import type { ValidationRule } from 'graphql';
import type { AppConfig } from '../config';

export interface QueryLimits {
  plugins: ApolloServerPlugin[];
  validationRules: ValidationRule[];
  maxTokens: number;
}

/**
 * Depth, cost and alias limits (graphql-armor) and the token limit of the parser, shared by HTTP and
 * WebSocket so neither path is a way around them. Introspection is exempt so explorers keep working.
 */
export function createQueryLimits(config: AppConfig['graphql']): QueryLimits {
  const armor = new ApolloArmor({
    maxDepth: { n: config.max_depth, ignoreIntrospection: true, flattenFragments: true, exposeLimits: true },
    costLimit: { maxCost: config.max_cost, ignoreIntrospection: true, exposeLimits: true },
    maxAliases: { n: config.max_aliases, exposeLimits: true },
    // Tokens are limited by the parser itself (Apollo `parseOptions`, graphql-ws `parse`): armor's plugin
    // throws from a request hook, which Apollo answers with 500 instead of 400.
    maxTokens: { enabled: false },
    maxDirectives: { n: 50 },
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  return { plugins, validationRules, maxTokens: config.max_tokens };
}
