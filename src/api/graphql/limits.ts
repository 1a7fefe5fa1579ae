import type { CodeOf } from '../../core/error-codes.js';
import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type ArgumentNode,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/**
 * Query limits applied at validation, before any resolver runs: selection depth, number of
 * aliases, cost = number of field selections after expanding fragments (so 500 duplicated
 * fields, or fragments spread into fragments, are refused however the document is written),
 * and the estimated number of values the answer holds.
 *
 * The selection count alone ignores list sizes: 15 aliases of `sensors { data { 23 fields } }`
 * are 375 selections but 15 × 30,300 × 23 values on fleet.yaml (251 MB, RSS +1.8 GB). So
 * every list multiplies what is selected under it by its size: the length of a literal id
 * list argument when given (`sensors(ids: [...])`, `createSensors(input: [...])`), else the
 * real count when the API knows it (`listSize`), else an assumed size for a large
 * organisation (`ASSUMED_LIST_SIZES`).
 */
export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
  /** Largest estimated number of values (fields × list sizes) an answer may hold. */
  maxValues: number;
  /**
   * Largest answer, in bytes of its JSON `data`, measured after execution (answer-budget.ts):
   * what the estimate cannot see (long strings, polygons of many vertices) is refused
   * `ANSWER_TOO_LARGE` instead of sent. Absent: `ANSWER_BUDGET_BYTES`.
   */
  maxAnswerBytes?: number;
  /** The real size of the list `typeName.fieldName` (largest per parent), when known; undefined: assumed. */
  listSize?: (typeName: string, fieldName: string) => number | undefined;
}

/**
 * The answer's byte budget (issue 33 item 7): 24 MiB of JSON. A query just under the former
 * estimate limit (2,500,000 values) answered 63 MB, and eight at once took RSS to 1.79 GB.
 */
export const ANSWER_BUDGET_BYTES = 24 * 1024 * 1024;

/**
 * 1,000,000 values is ~24 MB of JSON (~24 bytes a value; fleet.yaml: one alias of the 23-field
 * sensor list is ~700k values, 16.7 MB, 0.8 s), so the estimate refuses before execution what
 * the byte budget would refuse after it. One whole sensor list of a fleet passes; the
 * fifteen-alias amplification (8.6 M estimated, 251 MB measured) does not.
 */
export const DEFAULT_LIMITS: QueryLimits = {
  maxDepth: 10,
  maxAliases: 30,
  maxCost: 400,
  maxValues: 1_000_000,
  maxAnswerBytes: ANSWER_BUDGET_BYTES,
};

/**
 * Depth and cost limits for introspection (`__schema`, `__type`), which IDEs and code
 * generators send as the standard introspection query: depth 15 (its `TypeRef` fragment
 * nests `ofType` seven deep) and ~190 selections. Depth limits are for operations over the
 * data, not for introspection (platform-reference §2); these looser limits still refuse a
 * hand-built `fields { type { fields { … } } }` tower, and the estimated-values limit of
 * the operation applies to introspection as to everything else. Operators who want none
 * switch introspection off (`introspection: false`).
 */
export const INTROSPECTION_LIMITS = { maxDepth: 20, maxCost: 1_000 } as const;
const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * Assumed list sizes when neither an id list nor a real count bounds a list: a large
 * organisation (10 sites × 5 buildings × 5 floors, 100 sensors, 20 rooms and zones and 10
 * hives per floor), consistent top to bottom so a full topology traversal and the flat
 * lists it contains are estimated alike.
 */
export const ASSUMED_LIST_SIZES: Readonly<Record<string, number>> = {
  'SiteList.data': 10,
  'BuildingList.data': 50,
  'FloorList.data': 250,
  'RoomList.data': 5_000,
  'ZoneList.data': 5_000,
  'HiveList.data': 2_500,
  'SensorList.data': 25_000,
  'Site.buildings': 5,
  'Building.floors': 5,
  'Floor.rooms': 20,
  'Floor.zones': 20,
  'Floor.sensors': 100,
  'Floor.hives': 10,
  'Room.sensors': 5,
  'Zone.sensors': 5,
};
/** Any other list of objects (a room's sensors, tags, a tag's rooms, a mutation's results). */
const ASSUMED_OTHER_LIST_SIZE = 20;

interface Measure {
  depth: number;
  aliases: number;
  cost: number;
  /** Estimated values in the answer. */
  values: number;
}

const EMPTY: Measure = { depth: 0, aliases: 0, cost: 0, values: 0 };

/** What the walk needs besides the selection set: fragments, the schema, and the memo. */
interface Walk {
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  schema: GraphQLSchema;
  limits: QueryLimits;
  memo: Map<string, Measure>;
  visiting: Set<string>;
  /** Introspection subtrees, measured apart from the operation's own depth and cost. */
  introspection: Measure;
}

/**
 * Measures a selection set on `parent` (null when the type is unknown: graphql-js reports
 * that itself). `bound`: the length of an id list given to the connection field above a
 * `data` list, which caps that list.
 */
function measure(set: SelectionSetNode, parent: GraphQLCompositeType | null, w: Walk, bound: number | null): Measure {
  const total: Measure = { ...EMPTY };
  for (const sel of set.selections) {
    let m: Measure;
    if (sel.kind === Kind.FIELD) {
      const field = fieldMeasure(
        sel.name.value,
        sel.arguments ?? [],
        sel.selectionSet,
        sel.alias !== undefined,
        parent,
        w,
        bound,
      );
      if (INTROSPECTION_FIELDS.has(sel.name.value)) {
        w.introspection.depth = Math.max(w.introspection.depth, field.depth);
        w.introspection.cost += field.cost;
        // Aliases and the answer's size count toward the operation's limits as always.
        m = { depth: 0, aliases: field.aliases, cost: 0, values: field.values };
      } else m = field;
    } else if (sel.kind === Kind.INLINE_FRAGMENT)
      m = measure(sel.selectionSet, typeNamed(w.schema, sel.typeCondition?.name.value) ?? parent, w, bound);
    else m = fragmentMeasure(sel.name.value, w);
    total.depth = Math.max(total.depth, m.depth);
    total.aliases += m.aliases;
    total.cost += m.cost;
    total.values += m.values;
  }
  return total;
}

function fieldMeasure(
  name: string,
  args: readonly ArgumentNode[],
  set: SelectionSetNode | undefined,
  aliased: boolean,
  parent: GraphQLCompositeType | null,
  w: Walk,
  bound: number | null,
): Measure {
  const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
  const named = def ? getNamedType(def.type) : undefined;
  const type = named && isCompositeType(named) ? named : null;
  const idList = literalListLength(args);
  const inner = set ? measure(set, type, w, idList) : EMPTY;
  const isList = def !== undefined && isListType(getNullableType(def.type));
  // Lists of scalars (coordinates) are one value each; lists of objects multiply their selection.
  const size = isList && set ? listSize(parent?.name ?? '', name, idList ?? bound, w.limits) : 1;
  return {
    depth: inner.depth + 1,
    aliases: inner.aliases + (aliased ? 1 : 0),
    cost: inner.cost + 1,
    values: 1 + size * inner.values,
  };
}

function listSize(typeName: string, fieldName: string, bound: number | null, limits: QueryLimits): number {
  if (bound !== null) return bound;
  const key = `${typeName}.${fieldName}`;
  return limits.listSize?.(typeName, fieldName) ?? ASSUMED_LIST_SIZES[key] ?? ASSUMED_OTHER_LIST_SIZE;
}

/**
 * Arguments whose literal list length bounds the list returned, one item per entry at most.
 * Not `floor_ids`, `room_ids`, `hive_ids`, `hive_serials` or `tagIDs`: one floor id selects
 * a floor's hundred sensors.
 */
const BOUNDING_ARGS = new Set(['ids', 'serial_numbers', 'mac_addresses', 'input', 'sensors']);

/** Length of the first bounding argument given as a literal list; null if none. */
function literalListLength(args: readonly ArgumentNode[]): number | null {
  for (const a of args) if (a.value.kind === Kind.LIST && BOUNDING_ARGS.has(a.name.value)) return a.value.values.length;
  return null;
}

function typeNamed(schema: GraphQLSchema, name: string | undefined): GraphQLCompositeType | null {
  const t = name === undefined ? undefined : schema.getType(name);
  return t && isCompositeType(t) ? t : null;
}

function fragmentMeasure(name: string, w: Walk): Measure {
  const known = w.memo.get(name);
  if (known) return known;
  const frag = w.fragments.get(name);
  // Unknown or cyclic fragments are graphql-js's own validation errors; count them as empty here.
  if (!frag || w.visiting.has(name)) return EMPTY;
  w.visiting.add(name);
  const m = measure(frag.selectionSet, typeNamed(w.schema, frag.typeCondition.name.value), w, null);
  w.visiting.delete(name);
  w.memo.set(name, m);
  return m;
}

export function queryLimitsRule(limits: QueryLimits = DEFAULT_LIMITS): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    Document(doc) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      const schema = context.getSchema();
      for (const d of doc.definitions) {
        if (d.kind !== Kind.OPERATION_DEFINITION) continue;
        // A walk per operation: the introspection measure is the operation's own.
        const w: Walk = {
          fragments,
          schema,
          limits,
          memo: new Map(),
          visiting: new Set(),
          introspection: { ...EMPTY },
        };
        const root =
          d.operation === 'query'
            ? schema.getQueryType()
            : d.operation === 'mutation'
              ? schema.getMutationType()
              : schema.getSubscriptionType();
        const m = measure(d.selectionSet, root ?? null, w, null);
        const name = d.name?.value ?? 'anonymous operation';
        const fail = (code: CodeOf<'graphql'>, message: string): void =>
          context.reportError(new GraphQLError(message, { nodes: [d], extensions: { code } }));
        if (m.depth > limits.maxDepth)
          fail('QUERY_TOO_DEEP', `${name}: depth ${m.depth} exceeds the limit of ${limits.maxDepth}`);
        if (w.introspection.depth > INTROSPECTION_LIMITS.maxDepth) {
          fail(
            'QUERY_TOO_DEEP',
            `${name}: introspection depth ${w.introspection.depth} exceeds the limit of ${INTROSPECTION_LIMITS.maxDepth}`,
          );
        }
        if (w.introspection.cost > INTROSPECTION_LIMITS.maxCost) {
          fail(
            'QUERY_TOO_COSTLY',
            `${name}: ${w.introspection.cost} introspection selections exceed the limit of ${INTROSPECTION_LIMITS.maxCost}`,
          );
        }
        if (m.aliases > limits.maxAliases)
          fail('TOO_MANY_ALIASES', `${name}: ${m.aliases} aliases exceed the limit of ${limits.maxAliases}`);
        if (m.cost > limits.maxCost)
          fail('QUERY_TOO_COSTLY', `${name}: ${m.cost} field selections exceed the limit of ${limits.maxCost}`);
        else if (m.values > limits.maxValues) {
          fail(
            'QUERY_TOO_COSTLY',
            `${name}: an estimated ${Math.round(m.values)} values (fields × list sizes) exceed the limit of ${limits.maxValues}`,
          );
        }
      }
      return false; // measured once from the root; no need to walk the document again
    },
  });
}
