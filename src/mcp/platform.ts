import { Kind, parse } from 'graphql';
import { NO_CALL, cancelled, whileActive, type Call } from './call.js';
import { fromGraphqlCode, fromHttpStatus, toolError } from './errors.js';
import { EventLog, SLOW_CALL_MS } from './events.js';
import type { HttpPort } from './http-port.js';
import type { TokenSource } from './auth.js';

/**
 * The tool server's only way to the platform: GraphQL queries, reporting and stats. Read-only
 * by construction (issue 13, item 5): the paths are a closed list without client management,
 * and a GraphQL document is parsed and refused unless every operation in it is a query, so
 * nothing built on this class can reach a mutation.
 */
const PATHS = { graphql: '/api/v3/graphql', reporting: '/api/v3/reporting', stats: '/api/v4/reporting/stats' } as const;
type ReadPath = (typeof PATHS)[keyof typeof PATHS];

export class Platform {
  readonly #http: HttpPort;
  readonly #tokens: TokenSource;
  readonly #events: EventLog;
  readonly #checked = new Set<string>();

  constructor(http: HttpPort, tokens: TokenSource, events: EventLog = new EventLog()) {
    this.#http = http;
    this.#tokens = tokens;
    this.#events = events;
  }

  /**
   * A GraphQL query's `data`; GraphQL errors become tool errors by their `extensions.code`.
   * `call`: the request it is made for (call.ts); a cancelled one is not sent.
   */
  async query<T>(document: string, variables: Record<string, unknown> = {}, call: Call = NO_CALL): Promise<T> {
    assertQueryOnly(document, this.#checked);
    const body = (await this.#post(PATHS.graphql, { query: document, variables }, call)) as {
      data?: unknown;
      errors?: Array<{ message?: string; extensions?: { code?: unknown } }>;
    };
    const first = body.errors?.[0];
    if (first) throw toolError(fromGraphqlCode(first.extensions?.code), `GraphQL: ${first.message ?? 'error'}`);
    return body.data as T;
  }

  /** `POST /api/v3/reporting` (platform-reference §3): the points under `data`. */
  async report<P>(request: Record<string, unknown>, call: Call = NO_CALL): Promise<P[]> {
    const body = (await this.#post(PATHS.reporting, request, call)) as { data?: unknown };
    return Array.isArray(body.data) ? (body.data as P[]) : [];
  }

  /** `POST /api/v4/reporting/stats`: `{ id: { measurement: value } }`. */
  async stats(
    request: Record<string, unknown>,
    call: Call = NO_CALL,
  ): Promise<Record<string, Record<string, number | null>>> {
    const body = (await this.#post(PATHS.stats, request, call)) as {
      data?: Record<string, Record<string, number | null>>;
    };
    return body.data ?? {};
  }

  async #post(path: ReadPath, payload: unknown, call: Call): Promise<unknown> {
    const { signal } = call;
    for (let attempt = 0; ; attempt++) {
      // Checked before every request, retries included: a cancelled call makes no further one.
      if (signal.aborted) throw cancelled(signal);
      const token = await whileActive(call, this.#tokens.token());
      if (signal.aborted) throw cancelled(signal);
      const started = process.hrtime.bigint();
      let res;
      try {
        res = await this.#http.post(path, payload, token, signal === NO_CALL.signal ? undefined : signal);
      } catch (err) {
        if (signal.aborted) {
          this.#events.emit('debug', 'platform', `${path} abandoned: the call was cancelled`);
          throw err;
        }
        this.#events.emit(
          'error',
          'platform',
          `${path} did not answer: ${err instanceof Error ? err.message : String(err)}`,
        );
        throw err;
      }
      const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
      const slow = ms >= SLOW_CALL_MS;
      this.#events.emit(
        res.status >= 500 ? 'error' : slow ? 'warning' : 'debug',
        'platform',
        `${path} → ${res.status} in ${ms} ms${slow ? ` (slow: over ${SLOW_CALL_MS} ms)` : ''}`,
      );
      // A refused token is renewed once (platform-reference §1); a second refusal is final.
      if ((res.status === 401 || res.status === 403) && attempt === 0 && this.#tokens.renewable) {
        this.#tokens.invalidate();
        continue;
      }
      if (res.status === 200) return res.body;
      const b = res.body as { message?: unknown; errors?: Array<{ message?: unknown }> } | null;
      const detail =
        typeof b?.message === 'string'
          ? b.message
          : typeof b?.errors?.[0]?.message === 'string'
            ? b.errors[0].message
            : res.text.slice(0, 200);
      throw fromHttpStatus(res.status, path, detail);
    }
  }
}

/** Throws unless every operation of the document is a query (mutations and subscriptions refused). */
export function assertQueryOnly(document: string, seen?: Set<string>): void {
  if (seen?.has(document)) return;
  const doc = parse(document);
  for (const d of doc.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) continue;
    if (d.kind !== Kind.OPERATION_DEFINITION || d.operation !== 'query')
      throw toolError('INTERNAL_ERROR', 'the tool server is read-only: only GraphQL queries may be sent');
  }
  seen?.add(document);
}
