/**
 * Every error code of the product, one row each: the one table the edges map from (the CLI's
 * exit code, an HTTP answer's status and body, a login's RFC 6749 `error`, a GraphQL error's
 * `extensions.code`, a tool result's code, a dead letter's reason). docs/errors.md lists the
 * same rows, and test/core/error-codes.test.ts holds the two equal and checks that every code
 * is raised somewhere: a code here and nowhere else is a defect, as is a code raised and not here.
 *
 * Columns:
 * - `surface`: where a user meets it (`cli` exit, `dead-letter` reason, `rest` answer body,
 *   `login` answer (RFC 6749), `graphql` error, `tool` result, `webhook` input refusal,
 *   `consumer` state file);
 * - `status`: the HTTP status of an answer carrying it (null where it is no HTTP answer, or a
 *   GraphQL error, which is answered 200 with the error in its list); `alsoStatus`: other
 *   statuses a raise may give, each a documented case;
 * - `exit`: the CLI's exit code when a command ends with it (2: the caller's mistake or the
 *   environment; 1: the product failed);
 * - `oauth`: the RFC 6749 §5.2 `error` a login answer names;
 * - `message`: what it means, and the message of a raise that has nothing more specific;
 * - `doc`: the page that explains it in context.
 */
export type ErrorSurface = 'cli' | 'dead-letter' | 'rest' | 'login' | 'graphql' | 'tool' | 'webhook' | 'consumer';

/** OAuth 2.0 token endpoint errors (RFC 6749 §5.2). */
export type OAuthErrorName =
  'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'access_denied';

export interface ErrorRow {
  readonly surface: readonly ErrorSurface[];
  readonly status: number | null;
  readonly alsoStatus?: readonly number[];
  readonly exit?: 1 | 2;
  readonly oauth?: OAuthErrorName;
  readonly message: string;
  readonly doc: string;
}

const row = <R extends ErrorRow>(r: R): R => r;

export const ERROR_TABLE = {
  // The command line and the run.
  USAGE: row({ surface: ['cli'], status: null, exit: 2, message: 'the command line is not valid', doc: 'docs/cli.md' }),
  SCENARIO_INVALID: row({
    surface: ['cli'],
    status: null,
    exit: 2,
    message: 'the scenario is not valid',
    doc: 'docs/scenario-format.md',
  }),
  NOT_IMPLEMENTED: row({
    surface: ['cli'],
    status: null,
    exit: 2,
    message: 'this combination of options is not supported',
    doc: 'docs/cli.md',
  }),
  CAPTURE_INVALID: row({
    surface: ['cli'],
    status: null,
    exit: 2,
    message: 'the capture file is not valid',
    doc: 'docs/firmware.md',
  }),
  BROKER_FAILED: row({
    surface: ['cli'],
    status: null,
    exit: 1,
    message: 'the MQTT broker failed',
    doc: 'docs/platform.md',
  }),
  CLOUD_FAILED: row({ surface: ['cli'], status: null, exit: 1, message: 'the cloud failed', doc: 'docs/platform.md' }),
  STORE_FAILED: row({ surface: ['cli'], status: null, exit: 1, message: 'the store failed', doc: 'docs/platform.md' }),
  TIMEOUT: row({
    surface: ['cli'],
    status: null,
    exit: 1,
    message: 'an operation did not finish in its time',
    doc: 'docs/cli.md',
  }),
  LEASE_LOST: row({
    surface: ['cli'],
    status: null,
    exit: 1,
    message: 'a write of an ingest process whose partition lease another process took',
    doc: 'docs/scale-out.md',
  }),

  // Dead-letter reasons of the ingest (occusim deadletters).
  DECODE_FAILED: row({
    surface: ['dead-letter'],
    status: null,
    message: 'the message does not decode',
    doc: 'docs/protocol.md',
  }),
  UNKNOWN_HIVE: row({
    surface: ['dead-letter'],
    status: null,
    message: 'no hive has this serial',
    doc: 'docs/protocol.md',
  }),
  UNKNOWN_SENSOR: row({
    surface: ['dead-letter'],
    status: null,
    message: 'no sensor has this MAC',
    doc: 'docs/protocol.md',
  }),
  SENSOR_NOT_ON_HIVE: row({
    surface: ['dead-letter'],
    status: null,
    message: 'the sensor belongs to another hive',
    doc: 'docs/protocol.md',
  }),
  SENSOR_MODE_MISMATCH: row({
    surface: ['dead-letter'],
    status: null,
    message: "the packet's kind is not the sensor's mode",
    doc: 'docs/protocol.md',
  }),
  BAD_TOPIC: row({
    surface: ['dead-letter'],
    status: null,
    message: 'the topic is not one the hive may publish to',
    doc: 'docs/protocol.md',
  }),
  LATE_BEYOND_BUDGET: row({
    surface: ['dead-letter'],
    status: null,
    message: "a packet for a finalised minute beyond its hive's budget of minutes to reopen",
    doc: 'docs/occupancy.md',
  }),

  // HTTP API answers (spec §7).
  INVALID_REQUEST: row({
    surface: ['rest', 'graphql'],
    status: 400,
    message: 'required fields missing or data invalid',
    doc: 'docs/api.md',
  }),
  UNAUTHORIZED: row({ surface: ['rest', 'graphql'], status: 401, message: 'no valid token', doc: 'docs/api.md' }),
  FORBIDDEN: row({
    surface: ['rest', 'graphql'],
    status: 403,
    message: 'the token may not do this',
    doc: 'docs/api.md',
  }),
  NOT_FOUND: row({
    surface: ['rest', 'graphql', 'tool'],
    status: 404,
    message: 'no such thing in your organisation',
    doc: 'docs/api.md',
  }),
  RATE_LIMITED: row({
    surface: ['rest', 'tool'],
    status: 429,
    message: 'too many requests; retry later',
    doc: 'docs/api.md',
  }),
  INTERNAL: row({ surface: ['rest', 'graphql'], status: 500, message: 'internal error', doc: 'docs/api.md' }),
  CLIENT_NOT_FOUND: row({ surface: ['rest'], status: 404, message: 'client does not exist', doc: 'docs/api.md' }),
  // 400 when the organisation already holds its most clients: the caller can act on it (delete one).
  CLIENT_CREATE_FAILED: row({
    surface: ['rest'],
    status: 500,
    alsoStatus: [400],
    message: 'creating the client failed',
    doc: 'docs/api.md',
  }),
  CLIENT_GRANT_CREATE_FAILED: row({
    surface: ['rest'],
    status: 500,
    message: 'authorizing the client for API access failed',
    doc: 'docs/api.md',
  }),
  CLIENT_UPDATE_FAILED: row({
    surface: ['rest'],
    status: 500,
    message: 'updating the client failed',
    doc: 'docs/api.md',
  }),
  CLIENT_DELETE_FAILED: row({
    surface: ['rest'],
    status: 500,
    message: 'deleting the client failed',
    doc: 'docs/api.md',
  }),

  // Logins (RFC 6749 §5.2 bodies: `error` and `error_description`).
  LOGIN_INVALID_REQUEST: row({
    surface: ['login'],
    status: 400,
    oauth: 'invalid_request',
    message: 'the login request is not valid',
    doc: 'docs/api.md',
  }),
  LOGIN_INVALID_GRANT: row({
    surface: ['login'],
    status: 400,
    oauth: 'invalid_grant',
    message: 'wrong credentials, or a refresh token unknown, used or expired',
    doc: 'docs/api.md',
  }),
  LOGIN_UNSUPPORTED_GRANT: row({
    surface: ['login'],
    status: 400,
    oauth: 'unsupported_grant_type',
    message: 'the grant type is not supported here',
    doc: 'docs/api.md',
  }),
  LOGIN_INVALID_CLIENT: row({
    surface: ['login'],
    status: 401,
    oauth: 'invalid_client',
    message: 'client authentication failed',
    doc: 'docs/api.md',
  }),
  LOGIN_AUDIENCE_UNKNOWN: row({
    surface: ['login'],
    status: 403,
    oauth: 'access_denied',
    message: 'unknown audience',
    doc: 'docs/api.md',
  }),
  LOGIN_THROTTLED: row({
    surface: ['login'],
    status: 429,
    oauth: 'access_denied',
    message: 'too many login attempts; retry later',
    doc: 'docs/security.md',
  }),

  // GraphQL errors (`extensions.code`), answered 200 with the error in the list.
  BAD_USER_INPUT: row({ surface: ['graphql'], status: null, message: 'an argument is not valid', doc: 'docs/api.md' }),
  CONFLICT: row({
    surface: ['graphql'],
    status: null,
    message: 'the name or identity is taken',
    doc: 'docs/security.md',
  }),
  GRAPHQL_VALIDATION_FAILED: row({
    surface: ['graphql'],
    status: null,
    message: 'the query is not valid against the schema',
    doc: 'docs/api.md',
  }),
  QUERY_TOO_DEEP: row({
    surface: ['graphql'],
    status: null,
    message: 'the query nests deeper than the limit',
    doc: 'docs/api.md',
  }),
  TOO_MANY_ALIASES: row({
    surface: ['graphql'],
    status: null,
    message: 'the query has more aliases than the limit',
    doc: 'docs/api.md',
  }),
  QUERY_TOO_COSTLY: row({
    surface: ['graphql'],
    status: null,
    message: 'the query selects more fields than the limit',
    doc: 'docs/api.md',
  }),
  ANSWER_TOO_LARGE: row({
    surface: ['graphql'],
    status: null,
    message: 'the answer would exceed its byte budget',
    doc: 'docs/api.md',
  }),
  WEBHOOKS_DISABLED: row({
    surface: ['graphql'],
    status: null,
    message: 'webhooks are not enabled on this platform',
    doc: 'docs/webhooks.md',
  }),

  // Webhook subscriptions refused (GraphQL mutations, a scenario's `webhooks:`, the CLI).
  WEBHOOK_INVALID: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'the subscription is not valid',
    doc: 'docs/webhooks.md',
  }),
  WEBHOOK_BAD_URL: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'the URL does not parse, is not http(s), or carries credentials',
    doc: 'docs/webhooks.md',
  }),
  WEBHOOK_FORBIDDEN_ADDRESS: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'the destination is a loopback, private, link-local or metadata address the operator did not allow',
    doc: 'docs/webhooks.md',
  }),
  WEBHOOK_DUPLICATE_EVENT_TYPE: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'the organisation already has a subscription for one of these event types',
    doc: 'docs/webhooks.md',
  }),
  WEBHOOK_NOT_FOUND: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'no such subscription in your organisation',
    doc: 'docs/webhooks.md',
  }),
  WEBHOOK_BAD_SECRET: row({
    surface: ['webhook', 'graphql', 'cli'],
    status: null,
    exit: 2,
    message: 'a signing secret must be whsec_ and base64 of 24 to 64 bytes',
    doc: 'docs/webhooks.md',
  }),

  // A consumer's state file (occusim consumer-verify).
  CONSUMER_STATE_INVALID: row({
    surface: ['consumer', 'cli'],
    status: null,
    exit: 2,
    message: "a line of the consumer's state file is not valid",
    doc: 'docs/load-testing.md',
  }),

  // Tool results of the MCP server (platform-reference §5).
  AUTH_EXPIRED: row({
    surface: ['tool'],
    status: null,
    message: 'the token is missing, expired or may not do this',
    doc: 'docs/mcp.md',
  }),
  VALIDATION_FAILED: row({ surface: ['tool'], status: null, message: 'an argument is not valid', doc: 'docs/mcp.md' }),
  NETWORK_ERROR: row({
    surface: ['tool'],
    status: null,
    message: 'the platform API could not be reached',
    doc: 'docs/mcp.md',
  }),
  INTERNAL_ERROR: row({ surface: ['tool'], status: null, message: 'the tool failed', doc: 'docs/mcp.md' }),
} as const satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The codes a surface's edge may give, e.g. a tool result's six. */
export type CodeOf<S extends ErrorSurface> = {
  [C in ErrorCode]: S extends (typeof ERROR_TABLE)[C]['surface'][number] ? C : never;
}[ErrorCode];

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];
