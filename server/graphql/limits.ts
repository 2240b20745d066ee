import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ApolloServerPlugin } from '@apollo/server';
import type { ValidationRule } from 'graphql';
import type { AppConfig } from '../config';
import { costLimitRule } from './cost-limit';

export interface QueryLimits {
  plugins: ApolloServerPlugin[];
  validationRules: ValidationRule[];
  maxTokens: number;
}

/**
 * Depth and alias limits (graphql-armor), the cost limit (`costLimitRule`: fields × page sizes) and the
 * token limit of the parser, shared by HTTP and WebSocket so neither path is a way around them.
 * Introspection (`__schema`, `__type`) is exempt from depth and cost so explorers keep working; whether
 * it is answered without a token is `graphql.public_introspection`.
 */
export function createQueryLimits(config: AppConfig['graphql']): QueryLimits {
  const armor = new ApolloArmor({
    maxDepth: { n: config.max_depth, ignoreIntrospection: true, flattenFragments: true, exposeLimits: true },
    costLimit: { enabled: false },
    maxAliases: { n: config.max_aliases, exposeLimits: true },
    // Tokens are limited by the parser itself (Apollo `parseOptions`, graphql-ws `parse`): armor's plugin
    // throws from a request hook, which Apollo answers with 500 instead of 400.
    maxTokens: { enabled: false },
    maxDirectives: { n: 50 },
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  const cost = costLimitRule({ maxCost: config.max_cost, maxPageSize: config.max_page_size });
  return { plugins, validationRules: [...validationRules, cost], maxTokens: config.max_tokens };
}
