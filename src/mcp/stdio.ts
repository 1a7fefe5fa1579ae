import { systemClock, type Clock } from '../core/clock.js';
import { ClientCredentials } from './auth.js';
import { toolContext } from './context.js';
import { isToolError, toolError, type ToolError } from './errors.js';
import { EventLog } from './events.js';
import { fetchPort } from './http-port.js';
import { createMcpServer } from './server.js';
import { BoundedStdioTransport } from './stdio-transport.js';
import { readSettings, type McpSettings } from './settings.js';

/**
 * `occusim-mcp`: the tool server over stdio. Stdout carries protocol messages only (the SDK's
 * transport writes them); diagnostics go to stderr, and only with SERVICE_DEBUG on. Bad
 * settings do not stop the server: every tool then answers with the settings error, so the
 * assistant can tell its user what to fix.
 */
export async function runStdioServer(
  env: Record<string, string | undefined> = process.env,
  clock: Clock = systemClock,
): Promise<void> {
  let settings: McpSettings | null = null;
  let problem: ToolError | null = null;
  try {
    settings = readSettings(env);
  } catch (err) {
    problem = isToolError(err) ? err : toolError('VALIDATION_FAILED', String(err));
    settings = readSettings({});
  }
  const debug = settings.debug || /^(1|true|yes|on)$/i.test(env.SERVICE_DEBUG ?? '');
  const log = debug ? (m: string): void => void process.stderr.write(`occusim-mcp: ${m}\n`) : undefined;
  // Events go to the client as log messages (its level), and with SERVICE_DEBUG all of them to stderr.
  const events = new EventLog();
  if (log) events.on((e) => log(`${e.level} ${e.logger}: ${e.message}`));
  const http = fetchPort(settings.baseUrl);
  const ctx = toolContext(settings, http, new ClientCredentials(settings, http, clock, events), clock, events);
  const server = createMcpServer(
    () => {
      if (problem) throw problem;
      return ctx;
    },
    { events },
  );
  log?.(`serving ${settings.baseUrl} as ${settings.clientId ?? '(no client id)'}`);
  // Lines bounded: an oversized one is answered with an error and the server reads on (stdio-transport.ts).
  await server.connect(new BoundedStdioTransport(process.stdin, process.stdout));
  // Read the catalogue while the assistant starts up, so the first call does not wait for it
  // (a failure here is answered by that call instead).
  if (!problem && settings.clientId && settings.topologyTtlMs > 0)
    void ctx.catalog.withDevices().catch((err: unknown) => log?.(`prefetch: ${String(err)}`));
  // Ends when the client closes stdin.
  await new Promise<void>((resolve) => {
    const prev = server.onclose;
    server.onclose = () => (prev?.(), resolve());
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}
