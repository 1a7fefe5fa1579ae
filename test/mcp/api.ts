/** Direct calls to the platform's HTTP API, to check the tools' answers against it. */
export interface Api {
  token: string;
  post<T>(path: string, body: unknown): Promise<{ status: number; body: T }>;
  graphql<T>(query: string, variables?: Record<string, unknown>): Promise<T>;
}

export async function apiFor(s: {
  api: string;
  clientId: string;
  clientSecret: string;
  audience: string;
}): Promise<Api> {
  const login = await fetch(`${s.api}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: s.clientId,
      client_secret: s.clientSecret,
      audience: s.audience,
      grant_type: 'client_credentials',
    }),
  });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const post = async <T>(path: string, body: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${s.api}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  return {
    token,
    post,
    async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      const r = await post<{ data: T; errors?: unknown[] }>('/api/v3/graphql', { query, variables });
      if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
      return r.body.data;
    },
  };
}
