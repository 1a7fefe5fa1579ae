import type { FastifyInstance } from 'fastify';
import { EVERY_MS, FUNCTIONS, MAX_RANGE_MS, MEASUREMENTS } from './reporting/request.js';

/**
 * The OpenAPI 3.1 document of the REST routes, served at `/api/openapi.json`, with a small
 * browsable page at `/api/docs`. Written by hand from the same constants the routes use.
 */
const err = (description: string, withCode = true) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', required: ['message'], properties: { ...(withCode ? { code: { type: 'string' } } : {}), message: { type: 'string' } } } } },
});
const oauthErr = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'access_denied'] }, error_description: { type: 'string' } } } } },
});
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const str = { type: 'string' };
const client = { type: 'object', properties: { id: str, name: str, description: str, client_id: str } };

export function openApiDocument(): Record<string, unknown> {
  const days = Object.fromEntries(Object.entries(MAX_RANGE_MS).map(([k, v]) => [k, v / 86_400_000]));
  return {
    openapi: '3.1.0',
    info: { title: 'occusim platform API', version: '1', description: 'Login, client management, reporting and stats. GraphQL is at POST /api/v3/graphql (see docs/api.md).' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RFC 9068, typ at+jwt)' } } },
    paths: {
      '/api/v2/login': {
        post: {
          summary: 'Password grant (or grant_type refresh_token with refresh_token)',
          requestBody: json({ type: 'object', properties: { username: str, password: str, grant_type: { enum: ['password', 'refresh_token'] }, refresh_token: str } }),
          responses: {
            200: { description: 'Tokens; expires_in in seconds', ...json({ type: 'object', properties: { access_token: str, refresh_token: str, id_token: str, scope: str, expires_in: { type: 'integer' }, token_type: { const: 'Bearer' } } }) },
            400: oauthErr('invalid_request, invalid_grant or unsupported_grant_type'),
            429: oauthErr('too many failures; see Retry-After'),
          },
        },
      },
      '/api/v2/clients/login': {
        post: {
          summary: 'Client-credentials grant',
          requestBody: json({ type: 'object', required: ['client_id', 'client_secret', 'audience', 'grant_type'], properties: { client_id: str, client_secret: str, audience: str, grant_type: { const: 'client_credentials' } } }),
          responses: { 200: { description: 'Access token, no refresh token' }, 400: oauthErr('invalid_request or unsupported_grant_type'), 401: oauthErr('invalid_client'), 403: oauthErr('access_denied: unknown audience'), 429: oauthErr('too many failures') },
        },
      },
      '/api/v1/client': {
        get: { security: [{ bearer: [] }], summary: 'List the organisation\'s clients', responses: { 200: { description: 'Clients', ...json({ type: 'array', items: client }) }, 401: err('missing or invalid token, or no client_id claim', false) } },
        post: {
          security: [{ bearer: [] }],
          summary: 'Create a client (the secret is returned once)',
          requestBody: json({ type: 'object', required: ['name'], properties: { name: str, description: str } }),
          responses: { 201: { description: 'Created', ...json({ type: 'object', properties: { name: str, description: str, client_id: str, client_secret: str } }) }, 400: err('INVALID_REQUEST'), 401: err('unauthorised', false) },
        },
      },
      '/api/v1/client/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: str }],
        get: { security: [{ bearer: [] }], responses: { 200: { description: 'Client', ...json(client) }, 401: err('unauthorised', false), 404: err('CLIENT_NOT_FOUND') } },
        delete: { security: [{ bearer: [] }], responses: { 204: { description: 'Deleted' }, 401: err('unauthorised', false), 404: err('CLIENT_NOT_FOUND') } },
      },
      '/api/v3/reporting': {
        post: {
          security: [{ bearer: [] }],
          summary: `Time series. window.every ∈ ${Object.keys(EVERY_MS).join(', ')} in any spelling of the same length (60s = 1m); maximum range in days per interval: ${JSON.stringify(days)}. start/stop: RFC 3339 or relative (now, -5m, -24h) against the platform's present; stop omitted = now`,
          requestBody: json({
            type: 'object',
            required: ['window', 'filter'],
            properties: {
              window: { type: 'object', required: ['every'], properties: { every: { ...str, description: `${Object.keys(EVERY_MS).join(', ')} or an equal duration such as 60s` }, function: { enum: FUNCTIONS }, timezone: str, create_empty: { type: 'boolean' }, fill: { type: 'object', properties: { use_previous: { type: 'boolean' }, value: { type: 'number' } } } } },
              filter: { type: 'object', required: ['measurements', 'start'], properties: { measurements: { type: 'array', items: { enum: MEASUREMENTS } }, start: str, stop: str, calibrated: { oneOf: [{ type: 'boolean' }, { enum: ['true', 'raw', 'false'] }] }, calibration_points: { type: 'array', items: { type: 'object', required: ['timestamp', 'occupancy'], properties: { timestamp: str, occupancy: { type: 'number', minimum: 0 }, type: str } } } } },
              group_by: { type: 'object', properties: { order: { type: 'array', items: str }, raw: { type: 'boolean' } } },
              paginate: { type: 'object', properties: { page: { type: 'integer', minimum: 1 }, limit: { type: 'integer', minimum: 1, maximum: 10000 } } },
              options: { type: 'object', properties: { format: { enum: ['json', 'csv'] } } },
            },
          }),
          responses: { 200: { description: '{ data, page_info? } or CSV' }, 400: err('INVALID_REQUEST: out-of-limit range, window.offset, bad values'), 401: err('unauthorised', false), 404: err('NOT_FOUND: an id that is not the organisation\'s') },
        },
      },
      '/api/v4/reporting/stats': {
        post: {
          security: [{ bearer: [] }],
          summary: 'Aggregate occupancy: occupancy_{avg|median|used_avg|used_median}_{presence|traffic}; start and stop: a local date YYYY-MM-DD or an RFC 3339 timestamp (relative times refused)',
          requestBody: json({
            type: 'object',
            required: ['measurements', 'items', 'start', 'stop'],
            properties: { measurements: { type: 'array', items: str }, items: { type: 'array', items: str }, start: str, stop: str, filters: { type: 'object' } },
          }),
          responses: { 200: { description: '{ data: { item: { measurement: value } } }' }, 400: err('INVALID_REQUEST'), 401: err('unauthorised', false), 404: err('NOT_FOUND') },
        },
      },
    },
  };
}

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>occusim API</title>
<style>body{font:14px system-ui;margin:2rem;max-width:60rem}pre{background:#f4f4f4;padding:1rem;overflow:auto}</style></head>
<body><h1>occusim platform API</h1><p>OpenAPI document: <a href="/api/openapi.json">/api/openapi.json</a>. GraphQL: <code>POST /api/v3/graphql</code>.</p>
<div id="paths"></div><script>
fetch('/api/openapi.json').then(r=>r.json()).then(d=>{const el=document.getElementById('paths');
for(const [p,ops] of Object.entries(d.paths)){for(const [m,op] of Object.entries(ops)){if(m==='parameters')continue;
const h=document.createElement('h3');h.textContent=m.toUpperCase()+' '+p;el.appendChild(h);
const pre=document.createElement('pre');pre.textContent=JSON.stringify(op,null,2);el.appendChild(pre);}}});
</script></body></html>`;

export function registerOpenApi(app: FastifyInstance): void {
  app.get('/api/openapi.json', () => openApiDocument());
  app.get('/api/docs', (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
}
