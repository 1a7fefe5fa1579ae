import createClient from 'openapi-fetch';
import type { paths } from './occusim-api.js';

/**
 * Every documented REST route called through a client generated from the served OpenAPI
 * document (openapi-typescript's `paths`, openapi-fetch's `createClient`), as a user's own
 * code would: typed requests only, no hand-written URL or body shape. Each call's status and
 * parsed body are recorded so the test can hold them against the document's response schemas.
 * The documented error answers are asked for on purpose, one per documented status.
 */
export interface Exchange {
  /** The document's operationId. */
  operation: string;
  method: 'get' | 'post' | 'delete';
  /** The document's path template, as `paths` keys it. */
  path: keyof paths;
  status: number;
  contentType: string | null;
  body: unknown;
}

export interface Inputs {
  baseUrl: string;
  audience: string;
  client: { id: string; secret: string };
  user: { username: string; password: string };
  /** A room and its floor of the organisation, and a local date inside the run. */
  roomId: string;
  floorId: string;
  date: string;
  nextDate: string;
}

type Answer = { data?: unknown; error?: unknown; response: Response };

export async function callEveryRoute(inp: Inputs): Promise<Exchange[]> {
  const api = createClient<paths>({ baseUrl: inp.baseUrl });
  const log: Exchange[] = [];
  const keep = <A extends Answer>(operation: string, method: Exchange['method'], path: keyof paths, a: A): A => {
    log.push({
      operation,
      method,
      path,
      status: a.response.status,
      contentType: a.response.headers.get('content-type'),
      body: a.data ?? a.error,
    });
    return a;
  };

  // Logins: the client-credentials grant and the password grant, then each documented refusal.
  const clientLogin = (body: paths['/api/v2/clients/login']['post']['requestBody']['content']['application/json']) =>
    api.POST('/api/v2/clients/login', { body }).then((a) => keep('clientLogin', 'post', '/api/v2/clients/login', a));
  const granted = await clientLogin({
    grant_type: 'client_credentials',
    client_id: inp.client.id,
    client_secret: inp.client.secret,
    audience: inp.audience,
  });
  const token = granted.data?.access_token;
  if (token === undefined) throw new Error(`client login answered ${granted.response.status}`);
  await clientLogin({
    grant_type: 'password',
    client_id: inp.client.id,
    client_secret: inp.client.secret,
    audience: inp.audience,
  });
  await clientLogin({
    grant_type: 'client_credentials',
    client_id: inp.client.id,
    client_secret: 'not-the-secret',
    audience: inp.audience,
  });
  await clientLogin({
    grant_type: 'client_credentials',
    client_id: inp.client.id,
    client_secret: inp.client.secret,
    audience: 'https://elsewhere.invalid',
  });

  const login = (body: paths['/api/v2/login']['post']['requestBody']['content']['application/json']) =>
    api.POST('/api/v2/login', { body }).then((a) => keep('login', 'post', '/api/v2/login', a));
  const session = await login({ grant_type: 'password', username: inp.user.username, password: inp.user.password });
  const refresh = session.data?.refresh_token;
  if (refresh === undefined) throw new Error(`password login answered ${session.response.status}`);
  await login({ grant_type: 'refresh_token', refresh_token: refresh });
  await login({ grant_type: 'password', username: inp.user.username, password: 'not-the-password' });
  await login({ grant_type: 'password', password: inp.user.password });

  // Client management, with the token of the client-credentials login.
  const auth = { headers: { authorization: `Bearer ${token}` } };
  keep('listClients', 'get', '/api/v1/client', await api.GET('/api/v1/client', auth));
  keep('listClients', 'get', '/api/v1/client', await api.GET('/api/v1/client'));
  const created = keep(
    'createClient',
    'post',
    '/api/v1/client',
    await api.POST('/api/v1/client', {
      ...auth,
      body: { name: 'generated-client', description: 'made by openapi-fetch' },
    }),
  );
  keep('createClient', 'post', '/api/v1/client', await api.POST('/api/v1/client', { ...auth, body: { name: '' } }));
  const id = created.data?.client_id;
  if (id === undefined) throw new Error(`create client answered ${created.response.status}`);
  keep(
    'getClient',
    'get',
    '/api/v1/client/{id}',
    await api.GET('/api/v1/client/{id}', { ...auth, params: { path: { id } } }),
  );
  keep(
    'getClient',
    'get',
    '/api/v1/client/{id}',
    await api.GET('/api/v1/client/{id}', { ...auth, params: { path: { id: 'client_unknown' } } }),
  );
  keep(
    'deleteClient',
    'delete',
    '/api/v1/client/{id}',
    await api.DELETE('/api/v1/client/{id}', { ...auth, params: { path: { id } } }),
  );
  keep(
    'deleteClient',
    'delete',
    '/api/v1/client/{id}',
    await api.DELETE('/api/v1/client/{id}', { ...auth, params: { path: { id } } }),
  );

  // Reporting and stats: an answer, a malformed request, an id of no space of the organisation.
  const series = (rooms: string[], every: string) =>
    api
      .POST('/api/v3/reporting', {
        ...auth,
        body: {
          window: { every, function: 'max' },
          filter: { measurements: ['room_occupancy'], start: '-30m', rooms: { eq: rooms } },
        },
      })
      .then((a) => keep('reporting', 'post', '/api/v3/reporting', a));
  await series([inp.roomId], '5m');
  await series([inp.roomId], '7m');
  await series(['room_unknown'], '5m');
  const stats = (items: string[], start: string) =>
    api
      .POST('/api/v4/reporting/stats', {
        ...auth,
        body: {
          measurements: ['occupancy_avg_presence', 'occupancy_median_presence'],
          items,
          start,
          stop: inp.nextDate,
        },
      })
      .then((a) => keep('reportingStats', 'post', '/api/v4/reporting/stats', a));
  await stats([inp.floorId, inp.roomId], inp.date);
  await stats([inp.roomId], 'yesterday');
  await stats(['room_unknown'], inp.date);

  // Each guarded operation refuses a request without a valid token (401), whatever its body.
  const stranger = { headers: { authorization: 'Bearer not-a-token' } };
  keep(
    'createClient',
    'post',
    '/api/v1/client',
    await api.POST('/api/v1/client', { ...stranger, body: { name: 'intruder' } }),
  );
  keep(
    'getClient',
    'get',
    '/api/v1/client/{id}',
    await api.GET('/api/v1/client/{id}', { params: { path: { id: inp.client.id } } }),
  );
  keep(
    'deleteClient',
    'delete',
    '/api/v1/client/{id}',
    await api.DELETE('/api/v1/client/{id}', { ...stranger, params: { path: { id: inp.client.id } } }),
  );
  keep(
    'reporting',
    'post',
    '/api/v3/reporting',
    await api.POST('/api/v3/reporting', {
      body: { window: { every: '1h' }, filter: { measurements: ['floor_occupancy'], start: '-1h' } },
    }),
  );
  keep(
    'reportingStats',
    'post',
    '/api/v4/reporting/stats',
    await api.POST('/api/v4/reporting/stats', {
      ...stranger,
      body: { measurements: ['occupancy_avg_presence'], items: [inp.floorId], start: inp.date, stop: inp.nextDate },
    }),
  );
  return log;
}
