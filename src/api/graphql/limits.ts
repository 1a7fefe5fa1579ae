import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/**
 * Query limits applied at validation, before any resolver runs: selection depth, number of
 * aliases, and cost = number of field selections after expanding fragments (so 500
 * duplicated fields, or fragments spread into fragments to blow a query up, are refused
 * however the document is written).
 */
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 10, maxAliases: 30, maxCost: 400 };

interface Measure {
  depth: number;
  aliases: number;
  cost: number;
}

function measure(set: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, memo: Map<string, Measure>, visiting: Set<string>): Measure {
  const total: Measure = { depth: 0, aliases: 0, cost: 0 };
  for (const sel of set.selections) {
    let m: Measure;
    if (sel.kind === Kind.FIELD) {
      const inner = sel.selectionSet ? measure(sel.selectionSet, fragments, memo, visiting) : { depth: 0, aliases: 0, cost: 0 };
      m = { depth: inner.depth + 1, aliases: inner.aliases + (sel.alias ? 1 : 0), cost: inner.cost + 1 };
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      m = measure(sel.selectionSet, fragments, memo, visiting);
    } else {
      m = fragmentMeasure(sel.name.value, fragments, memo, visiting);
    }
    total.depth = Math.max(total.depth, m.depth);
    total.aliases += m.aliases;
    total.cost += m.cost;
  }
  return total;
}

function fragmentMeasure(name: string, fragments: ReadonlyMap<string, FragmentDefinitionNode>, memo: Map<string, Measure>, visiting: Set<string>): Measure {
  const known = memo.get(name);
  if (known) return known;
  const frag = fragments.get(name);
  // Unknown or cyclic fragments are graphql-js's own validation errors; count them as empty here.
  if (!frag || visiting.has(name)) return { depth: 0, aliases: 0, cost: 0 };
  visiting.add(name);
  const m = measure(frag.selectionSet, fragments, memo, visiting);
  visiting.delete(name);
  memo.set(name, m);
  return m;
}

export function queryLimitsRule(limits: QueryLimits = DEFAULT_LIMITS): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    Document(doc) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      const memo = new Map<string, Measure>();
      for (const d of doc.definitions) {
        if (d.kind !== Kind.OPERATION_DEFINITION) continue;
        const m = measure(d.selectionSet, fragments, memo, new Set());
        const name = d.name?.value ?? 'anonymous operation';
        const fail = (code: string, message: string): void => context.reportError(new GraphQLError(message, { nodes: [d], extensions: { code } }));
        if (m.depth > limits.maxDepth) fail('QUERY_TOO_DEEP', `${name}: depth ${m.depth} exceeds the limit of ${limits.maxDepth}`);
        if (m.aliases > limits.maxAliases) fail('TOO_MANY_ALIASES', `${name}: ${m.aliases} aliases exceed the limit of ${limits.maxAliases}`);
        if (m.cost > limits.maxCost) fail('QUERY_TOO_COSTLY', `${name}: ${m.cost} field selections exceed the limit of ${limits.maxCost}`);
      }
      return false; // measured once from the root; no need to walk the document again
    },
  });
}
