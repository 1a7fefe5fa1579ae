import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy that adds `Authorization: Bearer <token>` to every request and passes
 * everything else through untouched (Host and Origin included, so the server's DNS-rebinding
 * check still judges what the client sent), streaming both ways: the conformance suite has no
 * way to send a token itself.
 */
export async function bearerProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
