import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BoundedStdioTransport, JsonRpcErrors } from '../../src/mcp/stdio-transport.js';

/**
 * The stdio transport's line bound (issue 33, item 12): an over-long line is skipped to its
 * newline, held nowhere, and answered; a line that is not JSON-RPC is answered; the transport
 * reads on after each.
 */
function wired(max: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new BoundedStdioTransport(input, output, max);
  const received: unknown[] = [];
  const answers: Array<{ id: unknown; error?: { code: number; message: string } }> = [];
  let buf = '';
  output.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      answers.push(JSON.parse(buf.slice(0, nl)) as (typeof answers)[number]);
      buf = buf.slice(nl + 1);
    }
  });
  t.onmessage = (m) => received.push(m);
  return { input, t, received, answers };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const ping = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

describe('the bounded stdio transport', () => {
  it('answers a line over the bound with INVALID_REQUEST (id null), in any chunking, and reads the next line', async () => {
    const w = wired(1024);
    await w.t.start();
    // 5 KB over many chunks, the newline in the chunk that also starts the next message.
    for (let i = 0; i < 50; i++) w.input.write('x'.repeat(100));
    w.input.write(`"}\n${ping(1).slice(0, 10)}`);
    w.input.write(ping(1).slice(10));
    await tick();
    expect(w.answers).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: JsonRpcErrors.INVALID_REQUEST,
          message: expect.stringMatching(/exceeds the limit of 1024 bytes/),
        },
      },
    ]);
    expect(w.received).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  });

  it('takes a line of exactly the bound, and answers one that is not JSON or not JSON-RPC', async () => {
    const line = ping(2);
    const w = wired(line.length - 1);
    await w.t.start();
    w.input.write(`${line}{nope\n${JSON.stringify({ id: 3, hello: 1 })}\n\n\r\n`);
    await tick();
    expect(w.received).toHaveLength(1);
    expect(w.answers.map((a) => [a.id, a.error?.code])).toEqual([
      [null, JsonRpcErrors.PARSE_ERROR],
      [3, JsonRpcErrors.INVALID_REQUEST],
    ]);
  });

  it('closes when its input ends', async () => {
    const w = wired(1024);
    let closed = false;
    w.t.onclose = () => (closed = true);
    await w.t.start();
    w.input.end();
    await tick();
    expect(closed).toBe(true);
  });
});
