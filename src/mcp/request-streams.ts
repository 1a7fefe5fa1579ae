import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * `tools/call` over Streamable HTTP answered as a server-sent event stream (issue 28, item 5):
 * the call's `notifications/progress`, then its result, on the response of the POST that
 * carried it, as the transport spec has it. Every other request is answered as JSON by the
 * SDK's transport, as before.
 *
 * The SDK's transport chooses JSON or SSE once, for all of a session's requests, and in JSON
 * mode drops the notifications of a request. So this sits in front of it as the server's
 * transport: a `tools/call` POST is handed to the server here, with the same shape checks,
 * and whatever the server sends about that request id is written to its stream. A cancelled
 * call gets no answer (the SDK sends none, as the spec says), so its stream is ended when
 * the `notifications/cancelled` arrives; a client that closes the stream cancels the call.
 */
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
} as const;

/** Ids of ended streams remembered, so a late answer to one is dropped quietly; oldest forgotten first. */
const ENDED_KEPT = 1024;

type OnMessage = NonNullable<Transport['onmessage']>;

export class StreamedCalls implements Transport {
  readonly #inner: StreamableHTTPServerTransport;
  readonly #streams = new Map<RequestId, ServerResponse>();
  readonly #ended = new Set<RequestId>();
  #handler: OnMessage | undefined;

  constructor(inner: StreamableHTTPServerTransport) {
    this.#inner = inner;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  get onclose(): (() => void) | undefined {
    return this.#inner.onclose;
  }

  set onclose(h: (() => void) | undefined) {
    this.#inner.onclose = () => {
      this.#endAll();
      h?.();
    };
  }

  get onerror(): ((error: Error) => void) | undefined {
    return this.#inner.onerror;
  }

  set onerror(h: ((error: Error) => void) | undefined) {
    this.#inner.onerror = h;
  }

  get onmessage(): OnMessage | undefined {
    return this.#handler;
  }

  set onmessage(h: OnMessage | undefined) {
    this.#handler = h;
    this.#inner.onmessage = h && ((m, extra) => this.#deliver(m, extra));
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async close(): Promise<void> {
    this.#endAll();
    await this.#inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const response = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const id = response ? message.id : options?.relatedRequestId;
    const related = options?.relatedRequestId;
    const inner = (): Promise<void> =>
      this.#inner.send(message, related === undefined ? undefined : { relatedRequestId: related });
    if (id === undefined) return inner();
    const out = this.#streams.get(id);
    if (!out) {
      if (this.#ended.has(id)) return; // the client left or cancelled: nothing more to tell it
      return inner();
    }
    out.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (response) this.#end(id);
  }

  /**
   * Serves the POST as a stream when it is one `tools/call` the SDK's transport would accept
   * (JSON body, both media types accepted, a known protocol version); false otherwise, and the
   * SDK's transport answers it (its errors included).
   */
  serve(req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
    const message = streamable(req, body);
    if (!message || !this.#handler || this.#streams.has(message.id)) return false;
    const id = message.id;
    res.writeHead(200, { ...SSE_HEADERS, ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}) });
    this.#streams.set(id, res);
    res.once('close', () => {
      if (this.#streams.get(id) !== res) return;
      // Gone before its answer: the call is cancelled, so its upstream work stops.
      this.#forget(id);
      this.#deliver({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'the client closed the response stream' },
      });
    });
    this.#deliver(message, { requestInfo: { headers: req.headers } });
    return true;
  }

  #deliver(m: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.#handler?.(m, extra);
    // A cancelled call is never answered: end its stream now, not when the client gives up.
    if (isJSONRPCNotification(m) && m.method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if ((typeof id === 'string' || typeof id === 'number') && this.#streams.has(id)) this.#end(id);
    }
  }

  #end(id: RequestId): void {
    const out = this.#streams.get(id);
    this.#forget(id);
    out?.end();
  }

  #forget(id: RequestId): void {
    this.#streams.delete(id);
    this.#ended.add(id);
    if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.values().next().value as RequestId);
  }

  #endAll(): void {
    for (const id of [...this.#streams.keys()]) this.#end(id);
  }
}

function streamable(req: IncomingMessage, body: unknown): JSONRPCRequest | null {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return null;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return null;
  const parsed = JSONRPCMessageSchema.safeParse(body);
  if (!parsed.success || !isJSONRPCRequest(parsed.data) || parsed.data.method !== 'tools/call') return null;
  return parsed.data;
}
