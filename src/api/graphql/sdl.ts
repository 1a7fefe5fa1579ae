import { buildSchema, printSchema } from 'graphql';
import { typeDefs } from './schema.js';

/**
 * The GraphQL SDL of `/api/v3/graphql` as graphql-js prints it (`occusim schema --graphql`):
 * parsed and validated, so a schema that would not build is never printed.
 */
export function graphqlSdl(): string {
  return `${printSchema(buildSchema(typeDefs))}\n`;
}

/** `occusim schema --graphql`: the SDL on stdout. */
export function graphqlSchemaCommand(io: { stdout: { write(s: string): unknown } }): number {
  io.stdout.write(graphqlSdl());
  return 0;
}
