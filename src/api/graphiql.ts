import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

/**
 * A GraphQL IDE (GraphiQL 3) at `/api/graphiql` on the served API: log in with a user's
 * password or a client's credentials, then query `/api/v3/graphql` with the token, with
 * completion and docs from introspection. Everything is served from the installed packages
 * (React and GraphiQL UMD builds), so it works without internet access — unlike mercurius's
 * built-in page, which loads them from a CDN. Off with `--no-graphiql` (production-like runs).
 */
export const GRAPHIQL_PATH = '/api/graphiql';

const require = createRequire(import.meta.url);
const pkgDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));

/** The files the page loads: name → [path on disk, content type]. */
const ASSETS: Record<string, [() => string, string]> = {
  'react.js': [() => join(pkgDir('react'), 'umd/react.production.min.js'), 'text/javascript; charset=utf-8'],
  'react-dom.js': [
    () => join(pkgDir('react-dom'), 'umd/react-dom.production.min.js'),
    'text/javascript; charset=utf-8',
  ],
  'graphiql.js': [() => join(pkgDir('graphiql'), 'graphiql.min.js'), 'text/javascript; charset=utf-8'],
  'graphiql.css': [() => join(pkgDir('graphiql'), 'graphiql.min.css'), 'text/css; charset=utf-8'],
};

const DEFAULT_QUERY = `# Log in above, then run this (Ctrl-Enter).
query Floors {
  sites { data { id name buildings { id name floors { id name rooms { id name } } } } }
}
`;

function page(graphqlPath: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>occusim GraphiQL</title>
<link rel="stylesheet" href="${GRAPHIQL_PATH}/assets/graphiql.css">
<style>html,body{height:100%;margin:0;font:14px system-ui,sans-serif}#login{display:flex;gap:.5rem;align-items:center;padding:.4rem .6rem;background:#f3f4f6;border-bottom:1px solid #ddd;flex-wrap:wrap}
#login input{padding:2px 4px}#app{height:calc(100% - 42px)}#who{color:#555}</style></head><body>
<form id="login"><b>occusim</b>
<select id="kind"><option value="user">user</option><option value="client">client</option></select>
<input id="id" placeholder="username or client_id" size="28" autocomplete="username">
<input id="secret" type="password" placeholder="password or client_secret" size="28" autocomplete="current-password">
<input id="audience" placeholder="audience (clients)" size="22">
<button type="submit">Log in</button><span id="who">not logged in</span></form>
<div id="app"></div>
<script src="${GRAPHIQL_PATH}/assets/react.js"></script>
<script src="${GRAPHIQL_PATH}/assets/react-dom.js"></script>
<script src="${GRAPHIQL_PATH}/assets/graphiql.js"></script>
<script>
(function () {
  var token = sessionStorage.getItem('occusim-token');
  var who = document.getElementById('who');
  function render() {
    var fetcher = GraphiQL.createFetcher({ url: ${JSON.stringify(graphqlPath)}, headers: token ? { authorization: 'Bearer ' + token } : {} });
    ReactDOM.createRoot(document.getElementById('app')).render(React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: ${JSON.stringify(DEFAULT_QUERY)}, key: token || 'anonymous' }));
  }
  if (token) who.textContent = 'logged in (token kept for this tab)';
  document.getElementById('login').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var kind = document.getElementById('kind').value;
    var id = document.getElementById('id').value, secret = document.getElementById('secret').value;
    var body = kind === 'user'
      ? { username: id, password: secret }
      : { grant_type: 'client_credentials', client_id: id, client_secret: secret, audience: document.getElementById('audience').value };
    fetch(kind === 'user' ? '/api/v2/login' : '/api/v2/clients/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
      .then(function (res) {
        if (!res.ok || !res.j.access_token) { who.textContent = 'login refused: ' + (res.j.error_description || res.j.error || 'unknown error'); return; }
        token = res.j.access_token;
        sessionStorage.setItem('occusim-token', token);
        who.textContent = 'logged in as ' + id;
        location.reload();
      });
  });
  render();
})();
</script></body></html>`;
}

export function registerGraphiql(app: FastifyInstance, graphqlPath: string): void {
  const html = page(graphqlPath);
  const cache = new Map<string, Buffer>();
  app.get(GRAPHIQL_PATH, { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(html),
  );
  app.get<{ Params: { file: string } }>(`${GRAPHIQL_PATH}/assets/:file`, { schema: { hide: true } }, (req, reply) => {
    const asset = ASSETS[req.params.file];
    if (!asset) return reply.code(404).send({ code: 'NOT_FOUND', message: `no asset ${req.params.file}` });
    let body = cache.get(req.params.file);
    if (!body) cache.set(req.params.file, (body = readFileSync(asset[0]())));
    return reply.type(asset[1]).header('cache-control', 'public, max-age=3600').send(body);
  });
}
