import {
  getNamedType,
  Kind,
  TypeInfo,
  ValidationContext,
  type DocumentNode,
  type GraphQLSchema,
  type NamedTypeNode,
  type TypeNode,
} from 'graphql';

/**
 * `ID` and `String` variables are interchangeable here: both are strings on the wire.
 *
 * The reference platform declares its list arguments `[String!]` and its clients type their
 * variables that way (platform-reference §2); clients written against occusim's earlier
 * schema (the MCP server among them) send `$ids: [ID!]`; and the reference's single lookups
 * take `id: ID` while some clients send `$id: String`. graphql-js refuses a variable whose
 * named type differs from its position's (VariablesInAllowedPositionRule, which mercurius
 * always runs), so before validation a variable declared `ID` whose every use expects a
 * `String` is re-declared `String`, and the reverse; its list and non-null wrappers stay
 * as the client wrote them, so every other rule still applies. Executed as declared after
 * the rewrite: a string value coerces the same either way.
 *
 * Mutates `document` in place (mercurius caches the parsed document per source, so the
 * rewrite is made once per distinct query text).
 */
const SWAP: Readonly<Record<string, string>> = { ID: 'String', String: 'ID' };

export function unifyIdStringVariables(schema: GraphQLSchema, document: DocumentNode): void {
  try {
    rewrite(schema, document);
  } catch {
    // A document this walk cannot read is invalid: validation reports why, with its own message.
  }
}

function rewrite(schema: GraphQLSchema, document: DocumentNode): void {
  // ValidationContext computes each variable's usages with their expected input types.
  const context = new ValidationContext(schema, document, new TypeInfo(schema), () => undefined);
  for (const op of document.definitions) {
    if (op.kind !== Kind.OPERATION_DEFINITION || !op.variableDefinitions?.length) continue;
    const usages = context.getRecursiveVariableUsages(op);
    for (const def of op.variableDefinitions) {
      const named = namedNode(def.type);
      const swapTo = SWAP[named.name.value];
      if (swapTo === undefined) continue;
      const uses = usages.filter((u) => u.node.name.value === def.variable.name.value);
      const expects = uses.map((u) => (u.type ? getNamedType(u.type).name : null));
      if (uses.length > 0 && expects.every((t) => t === swapTo)) (named.name as { value: string }).value = swapTo;
    }
  }
}

function namedNode(t: TypeNode): NamedTypeNode {
  return t.kind === Kind.NAMED_TYPE ? t : namedNode(t.type);
}
