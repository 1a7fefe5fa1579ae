import type { FastifyRequest } from 'fastify';
import { unauthorized } from '../errors.js';
import type { Principal, TokenService } from './tokens.js';

/** The verified bearer token of a request; throws 401 when missing or invalid. */
export async function authenticate(req: FastifyRequest, tokens: TokenService): Promise<Principal> {
  const header = req.headers.authorization;
  if (typeof header !== 'string') throw unauthorized('missing Authorization: Bearer <token> header');
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  if (!m) throw unauthorized('malformed Authorization header: expected Bearer <token>');
  return tokens.verifyAccess(m[1] as string);
}
