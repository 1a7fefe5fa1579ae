import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME } from '../../src/mcp/server.js';
import { connectInMemory, type Session } from './connect.js';

/**
 * tools/call with arguments of the wrong type, and names of any length (issue 33, item 12):
 * each is a VALIDATION_FAILED tool result the assistant can act on — never a JSON-RPC -32603
 * with a validation dump — and a long name is not echoed back.
 */
let session: Session;
beforeAll(async () => {
  // Nothing is reached: each call is refused before it would read the platform.
  session = await connectInMemory({
    SERVICE_BASE_URL: 'http://127.0.0.1:9',
    SERVICE_CLIENT_ID: 'c',
    SERVICE_CLIENT_SECRET: 's',
  });
});
afterAll(async () => session?.close());

/** A raw tools/call: params as given, not as the SDK client's types would have them. */
async function call(params: Record<string, unknown>): Promise<{ isError: boolean; text: string; code: unknown }> {
  const r = await session.client.request({ method: 'tools/call', params } as never, CallToolResultSchema);
  const text = (r.content[0] as { text: string }).text;
  return { isError: r.isError === true, text, code: (r._meta as { code?: unknown } | undefined)?.code };
}

describe('tools/call input', () => {
  it('answers arguments null, an array, a string or a number with VALIDATION_FAILED as a tool result', async () => {
    for (const args of [null, [], ['ids'], 'x', 7, true]) {
      const r = await call({ name: 'service_get_current_occupancy', arguments: args });
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.code).toBe('VALIDATION_FAILED');
      expect(r.text).toMatch(/^VALIDATION_FAILED: service_get_current_occupancy: arguments must be an object/);
    }
    // Absent arguments are an empty object: the tool's own schema then names what is missing.
    const none = await call({ name: 'service_get_current_occupancy' });
    expect(none.code).toBe('VALIDATION_FAILED');
    expect(none.text).toContain('ids');
  });

  it('refuses a 100 KB tool name without echoing it, and names a short unknown one', async () => {
    const long = await call({ name: 'x'.repeat(100_000), arguments: {} });
    expect(long.code).toBe('VALIDATION_FAILED');
    expect(long.text.length).toBeLessThan(1_000);
    expect(long.text).toContain(`at most ${MAX_TOOL_NAME}`);
    const short = await call({ name: 'service_nope', arguments: {} });
    expect(short.text).toContain('"service_nope"');
    for (const name of [null, 42, { a: 1 }])
      expect((await call({ name, arguments: {} })).code, JSON.stringify(name)).toBe('VALIDATION_FAILED');
  });

  it('keeps serving after all of these', async () => {
    expect((await session.client.listTools()).tools).toHaveLength(10);
  });
});
