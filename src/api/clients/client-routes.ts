import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService, ClientAccount } from '../auth/accounts.js';
import { authenticate } from '../auth/guard.js';
import type { TokenService } from '../auth/tokens.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { invalidRequest, isAnswered, unauthorized } from '../errors.js';
import { refuseInvalid, routeOptions } from '../route-schemas.js';
import { descriptionProblem, nameProblem } from '../text-fields.js';
import { ClientQuota, MAX_CLIENTS_PER_ORGANISATION } from './client-quota.js';

/**
 * Client management (spec §4.5, §7): create (secret shown once), list, get, delete. A
 * token without a client_id claim is refused (401); clients belong to the caller's
 * organisation and another organisation's client is "not found". Names and descriptions are
 * checked as text (text-fields.ts), and an organisation holds at most `maxClients` clients.
 */
export interface ClientRouteDeps {
  accounts: AccountService;
  tokens: TokenService;
  /** Default MAX_CLIENTS_PER_ORGANISATION. */
  maxClients?: number;
}

const view = (c: ClientAccount): Record<string, string> => ({
  id: c.id,
  name: c.name,
  description: c.description,
  client_id: c.clientId,
});

const notFound = (id: string): AppError => new AppError(ErrorCodes.CLIENT_NOT_FOUND, `client ${id} does not exist`);

async function caller(req: FastifyRequest, tokens: TokenService) {
  const p = await authenticate(req, tokens);
  if (!p.clientId) throw unauthorized('the token carries no client_id claim');
  refuseInvalid(req);
  return p;
}

function createBody(body: unknown): { name: string; description: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidRequest('the body must be a JSON object');
  const { name, description } = body as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '') throw invalidRequest('name is required (a non-empty string)');
  if (description !== undefined && typeof description !== 'string')
    throw invalidRequest('description must be a string');
  const problem = nameProblem(name) ?? descriptionProblem(description ?? '');
  if (problem !== null) throw invalidRequest(problem);
  return { name: name.trim(), description: description ?? '' };
}

/** The organisation is at its limit: a client's request the client can act on (delete one), so 400 with the spec's create code. */
const overQuota = (limit: number): AppError =>
  new AppError(
    ErrorCodes.CLIENT_CREATE_FAILED,
    `creating the client failed: the organisation already has ${limit} clients, the most it may hold; delete one first`,
    { status: 400 },
  );

export function registerClientRoutes(app: FastifyInstance, deps: ClientRouteDeps): void {
  const quota = new ClientQuota(
    deps.maxClients ?? MAX_CLIENTS_PER_ORGANISATION,
    (orgId) => deps.accounts.listClients(orgId).length,
  );
  app.post('/api/v1/client', routeOptions('POST /api/v1/client'), async (req, reply) => {
    const p = await caller(req, deps.tokens);
    const { name, description } = createBody(req.body);
    const place = quota.reserve(p.orgId);
    if (place === null) throw overQuota(quota.limit);
    let created;
    try {
      // Failures come coded by their step (accounts.ts: create, grant, associate).
      created = await deps.accounts.createClient(p.orgId, name, description, p.clientId);
    } catch (err) {
      throw isAnswered(err)
        ? err
        : new AppError(ErrorCodes.CLIENT_CREATE_FAILED, `creating the client failed: ${(err as Error).message}`, {
            cause: err,
          });
    } finally {
      place.release();
    }
    void reply.code(201).header('Cache-Control', 'no-store');
    return {
      name: created.account.name,
      description: created.account.description,
      client_id: created.account.clientId,
      client_secret: created.secret,
    };
  });

  app.get('/api/v1/client', routeOptions('GET /api/v1/client'), async (req) => {
    const p = await caller(req, deps.tokens);
    return deps.accounts.listClients(p.orgId).map(view);
  });

  app.get<{ Params: { id: string } }>('/api/v1/client/:id', routeOptions('GET /api/v1/client/:id'), async (req) => {
    const p = await caller(req, deps.tokens);
    const c = deps.accounts.getClient(p.orgId, req.params.id);
    if (!c) throw notFound(req.params.id);
    return view(c);
  });

  app.delete<{ Params: { id: string } }>(
    '/api/v1/client/:id',
    routeOptions('DELETE /api/v1/client/:id'),
    async (req, reply) => {
      const p = await caller(req, deps.tokens);
      if (!(await deps.accounts.deleteClient(p.orgId, req.params.id))) throw notFound(req.params.id);
      deps.tokens.revokeSubject(req.params.id);
      return reply.code(204).send();
    },
  );
}
