import type { FastifyRequest, FastifySchema } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { invalidRequest } from './errors.js';
import { EVERY_MS, FUNCTIONS, MAX_RANGE_MS, MEASUREMENTS } from './reporting/request.js';

/**
 * The REST routes' JSON schemas: each route validates its request with its own (Fastify +
 * Ajv, no type coercion) and @fastify/swagger builds the OpenAPI document from the same
 * objects (src/api/openapi.ts), so the document cannot drift from what the routes accept.
 *
 * The schemas refuse what is malformed (a body that is not an object, a field of the wrong
 * type, a missing required field); the routes' parsers then apply the rules a schema cannot
 * say well (an interval spelled `60s`, a range per interval, ids of the caller's organisation).
 * Validation errors are attached, not answered, so a route authenticates first: an anonymous
 * request is a 401 whatever its body (`refuseInvalid`).
 */
const str = { type: 'string' } as const;
const bearer = [{ bearer: [] }];

const err = (description: string, withCode = true) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['message'],
        properties: { ...(withCode ? { code: str } : {}), message: str },
      },
    },
  },
});
const oauthErr = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          error: {
            type: 'string',
            enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'access_denied'],
          },
          error_description: str,
        },
      },
    },
  },
});
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const idList = { type: 'object', required: ['eq'], properties: { eq: { type: 'array', minItems: 1, items: str } } };
const client = { type: 'object', properties: { id: str, name: str, description: str, client_id: str } };

export interface RouteDoc {
  schema: FastifySchema;
  /** Documented responses (the document only: replies are not serialised through them). */
  responses: Record<string, unknown>;
}

// The answers' shapes (docs/api.md): a row per window and space, a value per item and measurement.
const value = { type: ['number', 'null'] } as const;
const seriesAnswer = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['measurement', 'time', 'value'],
        properties: {
          measurement: { type: 'string', enum: [...MEASUREMENTS] },
          time: str,
          start: str,
          stop: str,
          value,
        },
      },
    },
    page_info: { type: 'object' },
  },
};
const statsAnswer = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'object', additionalProperties: { type: 'object', additionalProperties: value } } },
};

const days = Object.fromEntries(Object.entries(MAX_RANGE_MS).map(([k, v]) => [k, v / 86_400_000]));

export const ROUTE_DOCS = {
  'POST /api/v2/login': {
    schema: {
      tags: ['login'],
      summary: 'Password grant (or grant_type refresh_token with refresh_token)',
      body: {
        type: 'object',
        properties: {
          username: str,
          password: str,
          grant_type: { type: 'string', examples: ['password', 'refresh_token'] },
          refresh_token: str,
        },
      },
    },
    responses: {
      200: {
        description: 'Tokens; expires_in in seconds',
        ...json({
          type: 'object',
          properties: {
            access_token: str,
            refresh_token: str,
            id_token: str,
            scope: str,
            expires_in: { type: 'integer' },
            token_type: { const: 'Bearer' },
          },
        }),
      },
      400: oauthErr('invalid_request, invalid_grant or unsupported_grant_type'),
      429: oauthErr('too many failures; see Retry-After'),
    },
  },
  'POST /api/v2/clients/login': {
    schema: {
      tags: ['login'],
      summary: 'Client-credentials grant',
      body: {
        type: 'object',
        properties: {
          client_id: str,
          client_secret: str,
          audience: str,
          grant_type: { type: 'string', examples: ['client_credentials'] },
        },
      },
    },
    responses: {
      200: {
        description: 'Access token, no refresh token; expires_in in seconds',
        ...json({
          type: 'object',
          required: ['access_token', 'expires_in', 'token_type'],
          properties: {
            access_token: str,
            scope: str,
            expires_in: { type: 'integer' },
            token_type: { const: 'Bearer' },
          },
        }),
      },
      400: oauthErr('invalid_request or unsupported_grant_type'),
      401: oauthErr('invalid_client'),
      403: oauthErr('access_denied: unknown audience'),
      429: oauthErr('too many failures'),
    },
  },
  'GET /api/v1/client': {
    schema: { tags: ['clients'], security: bearer, summary: "List the organisation's clients" },
    responses: {
      200: { description: 'Clients', ...json({ type: 'array', items: client }) },
      401: err('missing or invalid token, or no client_id claim', false),
    },
  },
  'POST /api/v1/client': {
    schema: {
      tags: ['clients'],
      security: bearer,
      summary: 'Create a client (the secret is returned once)',
      body: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, description: str },
      },
    },
    responses: {
      201: {
        description: 'Created',
        ...json({ type: 'object', properties: { name: str, description: str, client_id: str, client_secret: str } }),
      },
      400: err('INVALID_REQUEST or CLIENT_CREATE_FAILED (the organisation holds its most clients)'),
      401: err('unauthorised', false),
      500: err(
        'CLIENT_CREATE_FAILED, CLIENT_GRANT_CREATE_FAILED or CLIENT_UPDATE_FAILED: a step of the creation failed and was undone',
      ),
    },
  },
  'GET /api/v1/client/:id': {
    schema: {
      tags: ['clients'],
      security: bearer,
      summary: 'One client',
      params: { type: 'object', required: ['id'], properties: { id: str } },
    },
    responses: {
      200: { description: 'Client', ...json(client) },
      401: err('unauthorised', false),
      404: err('CLIENT_NOT_FOUND'),
    },
  },
  'DELETE /api/v1/client/:id': {
    schema: {
      tags: ['clients'],
      security: bearer,
      summary: 'Delete a client (its tokens stop working)',
      params: { type: 'object', required: ['id'], properties: { id: str } },
    },
    responses: {
      204: { type: 'null', description: 'Deleted (no body)' },
      401: err('unauthorised', false),
      404: err('CLIENT_NOT_FOUND'),
      500: err('CLIENT_DELETE_FAILED: the deletion was not stored; the client is kept'),
    },
  },
  'POST /api/v3/reporting': {
    schema: {
      tags: ['reporting'],
      security: bearer,
      summary: 'Time series of occupancy and traffic',
      description: `window.every ∈ ${Object.keys(EVERY_MS).join(', ')} in any spelling of the same length (60s = 1m); maximum range in days per interval: ${JSON.stringify(days)}. start/stop: RFC 3339 or relative (now, -5m, -24h) against the platform's present; stop omitted = now.`,
      body: {
        type: 'object',
        required: ['window', 'filter'],
        properties: {
          window: {
            type: 'object',
            required: ['every'],
            properties: {
              every: {
                type: 'string',
                description: `${Object.keys(EVERY_MS).join(', ')} or an equal duration such as 60s`,
                examples: ['1h'],
              },
              function: { type: 'string', enum: [...FUNCTIONS] },
              timezone: str,
              create_empty: { type: 'boolean' },
              fill: { type: 'object', properties: { use_previous: { type: 'boolean' }, value: { type: 'number' } } },
            },
          },
          filter: {
            type: 'object',
            required: ['measurements', 'start'],
            properties: {
              measurements: { type: 'array', minItems: 1, items: { type: 'string', enum: [...MEASUREMENTS] } },
              start: { type: 'string', examples: ['-24h'] },
              stop: { type: ['string', 'null'] },
              calibrated: { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'raw', 'false'] }] },
              calibration_points: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['timestamp', 'occupancy'],
                  properties: { timestamp: str, occupancy: { type: 'number', minimum: 0 }, type: str },
                },
              },
              spaces: idList,
              rooms: idList,
              zones: idList,
              buildings: idList,
              sensors: idList,
              hives: idList,
              tags: idList,
            },
          },
          group_by: { type: 'object', properties: { order: { type: 'array', items: str }, raw: { type: 'boolean' } } },
          paginate: {
            type: 'object',
            properties: {
              page: { type: 'integer', minimum: 1 },
              limit: { type: 'integer', minimum: 1, maximum: 10000 },
            },
          },
          options: { type: 'object', properties: { format: { type: 'string', enum: ['json', 'csv'] } } },
        },
      },
    },
    responses: {
      200: {
        description: '{ data, page_info? }, or CSV with options.format csv',
        content: { 'application/json': { schema: seriesAnswer }, 'text/csv': { schema: str } },
      },
      400: err('INVALID_REQUEST: out-of-limit range, window.offset, bad values'),
      401: err('unauthorised', false),
      404: err("NOT_FOUND: an id that is not the organisation's"),
    },
  },
  'POST /api/v4/reporting/stats': {
    schema: {
      tags: ['reporting'],
      security: bearer,
      summary: 'Aggregate occupancy',
      description:
        'occupancy_{avg|median|used_avg|used_median}_{presence|traffic}; start and stop: a local date YYYY-MM-DD or an RFC 3339 timestamp (relative times refused)',
      body: {
        type: 'object',
        required: ['measurements', 'items', 'start', 'stop'],
        properties: {
          measurements: { type: 'array', minItems: 1, items: { type: 'string', examples: ['occupancy_avg_presence'] } },
          items: { type: 'array', minItems: 1, items: str },
          start: str,
          stop: str,
          filters: { type: 'object' },
        },
      },
    },
    responses: {
      200: { description: '{ data: { item: { measurement: value } } }', ...json(statsAnswer) },
      400: err('INVALID_REQUEST'),
      401: err('unauthorised', false),
      404: err('NOT_FOUND'),
    },
  },
} satisfies Record<string, RouteDoc>;

export type DocumentedRoute = keyof typeof ROUTE_DOCS;

/** Route options: the route's schema, with validation errors kept for the handler (`refuseInvalid`). */
export function routeOptions(route: DocumentedRoute): { schema: FastifySchema; attachValidation: true } {
  return { schema: ROUTE_DOCS[route].schema, attachValidation: true };
}

/** After authentication: a request its route's schema refused is a 400 naming the place. */
export function refuseInvalid(req: FastifyRequest): void {
  const e = req.validationError;
  // Fastify's message names the place: "body/window must have required property 'every'".
  if (e) throw invalidRequest(e.message);
}

/**
 * Ajv's errors as one message in the parsers' own words: `filter.measurements[0] must be one
 * of floor_occupancy, …`, `window.every is required` (Fastify's `schemaErrorFormatter`).
 */
export function schemaErrorMessage(errors: readonly FastifySchemaValidationError[], dataVar: string): string {
  const e = errors[0];
  if (!e) return `the ${dataVar} is invalid`;
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join('');
  const place = path === '' ? (dataVar === 'body' ? 'the body' : dataVar) : path;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${path === '' ? '' : `${path}.`}${String(p.missingProperty)} is required`;
    case 'enum':
      return `${place} must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'type':
      return `${place} must be ${Array.isArray(p.type) ? p.type.join(' or ') : `a${/^[aeiou]/.test(String(p.type)) ? 'n' : ''} ${String(p.type)}`}`;
    default:
      return `${place} ${e.message ?? 'is invalid'}`;
  }
}
