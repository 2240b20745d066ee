import { GraphQLError, Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';

/** Page size assumed for a connection whose `first` is not given (the resolvers' default). */
export const DEFAULT_PAGE_SIZE = 50;

export interface CostLimitOptions {
  maxCost: number;
  /** `graphql.max_page_size`: the size assumed for `first: $variable`, and the most a literal counts for. */
  maxPageSize: number;
}

/**
 * The estimated cost of an operation: every selected field counts 1, and a field with a `first` (or
 * `last`) argument multiplies itself and everything under it by the page size: the literal (at most
 * `max_page_size`, a larger one is refused by the field itself), `max_page_size` for a variable, 50 when
 * absent. So `messages(first: 200) { edges { node { …11 fields } } }` costs 200 × 14 = 2800, and a cost
 * limit of C allows one full page of `max_page_size` items with about C / max_page_size fields.
 * Fragments count where they are spread; introspection (`__schema`, `__type`) and `__typename` count 0.
 */
export function costOf(selectionSet: SelectionSetNode, context: ValidationContext, options: CostLimitOptions, spreading = new Set<string>()): number {
  let total = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      total += fieldCost(selection, context, options, spreading);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      total += costOf(selection.selectionSet, context, options, spreading);
    } else {
      const name = selection.name.value;
      const fragment = context.getFragment(name);
      if (!fragment || spreading.has(name)) continue; // unknown or cyclic: other rules refuse it
      spreading.add(name);
      total += costOf(fragment.selectionSet, context, options, spreading);
      spreading.delete(name);
    }
  }
  return total;
}

function fieldCost(field: FieldNode, context: ValidationContext, options: CostLimitOptions, spreading: Set<string>): number {
  const name = field.name.value;
  if (name === '__schema' || name === '__type' || name === '__typename') return 0;
  const inner = field.selectionSet ? costOf(field.selectionSet, context, options, spreading) : 0;
  return (1 + inner) * pageSize(field, options);
}

function pageSize(field: FieldNode, options: CostLimitOptions): number {
  const arg = field.arguments?.find((a) => a.name.value === 'first' || a.name.value === 'last');
  if (!arg) return field.selectionSet && isConnectionLike(field) ? DEFAULT_PAGE_SIZE : 1;
  if (arg.value.kind === Kind.INT) return Math.max(1, Math.min(Number.parseInt(arg.value.value, 10) || 1, options.maxPageSize));
  if (arg.value.kind === Kind.VARIABLE) return options.maxPageSize;
  return 1;
}

/** A field whose selection asks for `edges` is a connection even without `first`. */
function isConnectionLike(field: FieldNode): boolean {
  return field.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && s.name.value === 'edges') ?? false;
}

/** Validation rule: refuses an operation whose estimated cost is above `graphql.max_cost`. */
export function costLimitRule(options: CostLimitOptions): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      const cost = costOf(operation.selectionSet, context, options);
      if (cost > options.maxCost) {
        context.reportError(
          new GraphQLError(`Query cost ${cost} is above the limit of ${options.maxCost} (graphql.max_cost); ask for fewer fields or smaller pages.`, {
            nodes: [operation],
          }),
        );
      }
    },
  });
}
