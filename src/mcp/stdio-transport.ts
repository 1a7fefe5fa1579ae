import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Newline-delimited JSON-RPC over stdin/stdout (MCP stdio transport) with every line bounded.
 * The SDK's transport closes itself when its buffer passes 10 MiB, and the server then exits
 * with code 0 and no answer (issue 33, item 12). Here a line longer than `maxLineBytes` is
 * skipped up to its newline (never held) and answered with a JSON-RPC error; a line that is
 * not JSON, or not a JSON-RPC message, is answered too (-32700, -32600: JSON-RPC 2.0 §5.1),
 * and the server reads on.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

export const JsonRpcErrors = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
} as const;

const NEWLINE = 0x0a;

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #in: Readable;
  readonly #out: Writable;
  readonly #max: number;
  /** The current line's chunks so far (at most `#max` bytes); none while skipping. */
  #parts: Buffer[] = [];
  #size = 0;
  /** Bytes of an over-long line seen so far: it is skipped to its newline. */
  #skipped = 0;
  #closed = false;

  constructor(input: Readable, output: Writable, maxLineBytes = MAX_LINE_BYTES) {
    this.#in = input;
    this.#out = output;
    this.#max = maxLineBytes;
  }

  async start(): Promise<void> {
    this.#in.on('data', this.#onData);
    this.#in.on('error', this.#onError);
    this.#in.once('end', this.#onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#out.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#out.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#in.off('data', this.#onData);
    this.#in.off('error', this.#onError);
    this.#in.off('end', this.#onEnd);
    this.#parts = [];
    this.onclose?.();
  }

  readonly #onError = (err: Error): void => this.onerror?.(err);
  readonly #onEnd = (): void => void this.close();

  readonly #onData = (chunk: Buffer | string): void => {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    while (buf.length > 0) {
      const nl = buf.indexOf(NEWLINE);
      const part = nl < 0 ? buf : buf.subarray(0, nl);
      this.#take(part);
      if (nl < 0) return;
      this.#endLine();
      buf = buf.subarray(nl + 1);
    }
  };

  #take(part: Buffer): void {
    if (this.#skipped > 0 || this.#size + part.length > this.#max) {
      this.#skipped += this.#size + part.length;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    this.#parts.push(part);
    this.#size += part.length;
  }

  #endLine(): void {
    if (this.#skipped > 0) {
      const n = this.#skipped;
      this.#skipped = 0;
      this.#fail(
        JsonRpcErrors.INVALID_REQUEST,
        `a message of ${n} bytes or more exceeds the limit of ${this.#max} bytes per line; it was skipped`,
      );
      return;
    }
    const line = Buffer.concat(this.#parts, this.#size).toString('utf8').replace(/\r$/, '');
    this.#parts = [];
    this.#size = 0;
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.#fail(JsonRpcErrors.PARSE_ERROR, 'parse error: a line must hold one JSON-RPC message');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.#fail(JsonRpcErrors.INVALID_REQUEST, 'invalid request: not a JSON-RPC 2.0 message', idOf(json));
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #fail(code: number, message: string, id: string | number | null = null): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

/** The id of a message that failed validation, when it has a usable one (else null, as §5 says). */
function idOf(json: unknown): string | number | null {
  const id = typeof json === 'object' && json !== null ? (json as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
