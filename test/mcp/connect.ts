import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ClientCredentials } from '../../src/mcp/auth.js';
import { toolContext } from '../../src/mcp/context.js';
import { EventLog } from '../../src/mcp/events.js';
import { fetchPort } from '../../src/mcp/http-port.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { readSettings } from '../../src/mcp/settings.js';
import { systemClock } from '../../src/core/clock.js';

/** An MCP client connected to the tool server over the SDK's in-memory transport. */
export interface Called {
  isError: boolean;
  code: string | null;
  text: string;
  data: Record<string, unknown> & Record<string, never[]>;
}

export interface Session {
  client: Client;
  call(name: string, args: unknown): Promise<Called>;
  close(): Promise<void>;
}

export async function connectInMemory(env: Record<string, string>): Promise<Session> {
  const settings = readSettings(env);
  const http = fetchPort(settings.baseUrl);
  const events = new EventLog();
  const ctx = toolContext(
    settings,
    http,
    new ClientCredentials(settings, http, systemClock, events),
    systemClock,
    events,
  );
  const server = createMcpServer(() => ctx, { events });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'occusim-test', version: '1.0.0' });
  await client.connect(b);
  return { client, call: (name, args) => callOn(client, name, args), close: () => client.close() };
}

export async function callOn(client: Client, name: string, args: unknown): Promise<Called> {
  // The client validates structuredContent against each tool's outputSchema (listTools first).
  const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
  const text = (r.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
  const code = r.isError ? (/^([A-Z_]+):/.exec(text)?.[1] ?? null) : null;
  return { isError: r.isError === true, code, text, data: (r.structuredContent ?? {}) as Called['data'] };
}

export const envFor = (s: { api: string; clientId: string; clientSecret: string }): Record<string, string> => ({
  SERVICE_CLIENT_ID: s.clientId,
  SERVICE_CLIENT_SECRET: s.clientSecret,
  SERVICE_BASE_URL: s.api,
});
