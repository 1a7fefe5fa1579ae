import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterEach, describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import type { EventType } from '../../src/webhooks/event-types.js';
import { SIMULATED_TIMESTAMPS_WARNING } from '../../src/webhooks/timestamps.js';
import { failsAt } from './receiver-fixture.js';

/**
 * Issue 27 item 1: the judges are the verifiers consumers run — the Standard Webhooks reference
 * library (npm `standardwebhooks`) and Svix's (`svix` `Webhook.verify`), each at its default
 * 5-minute tolerance against this machine's clock. A served quickstart (its API up, as
 * `run --serve`) delivers five event types to a consumer that verifies every request with both
 * libraries, answers 20 % of attempts 500 (so retries are verified too), and has its secrets
 * rotated through GraphQL `updateWebhooks(rotate_secret)` mid-run. Before, both libraries
 * rejected 100 % of the deliveries ("Message timestamp too old": the header was the scenario's date).
 */
const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const TYPES: readonly EventType[] = ['DETECTIONS', 'TRAFFIC', 'ROOM_OCCUPANCY', 'FLOOR_OCCUPANCY', 'ZONE_OCCUPANCY_1M'];
const AUDIENCE = 'https://api.occusim.test';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

/** What one library says of a request with one secret: null when it verifies, else its error. */
type Judge = (secret: string, body: string, headers: Record<string, string>) => string | null;
const judges: Record<'standardwebhooks' | 'svix', Judge> = {
  standardwebhooks: (secret, body, headers) => {
    try {
      new StandardWebhook(secret).verify(body, headers);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  },
  svix: (secret, body, headers) => {
    try {
      new SvixWebhook(secret).verify(body, headers);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  },
};

interface Consumer {
  url: string;
  requests: number;
  /** Requests some library refused with every secret the consumer holds, with its reason. */
  rejected: Array<{ library: string; reason: string }>;
  /** Requests verified with the new secret (the rotation reached the header). */
  verifiedWithNew: number;
  /** Ids acknowledged (2xx), each once. */
  acknowledged: Set<string>;
  failed: number;
  /** Called once after `rotateAfter` acknowledged deliveries. */
  onRotate: (() => Promise<void>) | null;
  close(): Promise<void>;
}

/** A consumer as the Standard Webhooks docs write one: verify with each secret held, then process (20 % fail with 500). */
async function startConsumer(rotateAfter: number): Promise<Consumer> {
  const attempts = new Map<string, number>();
  const c: Consumer = {
    url: '',
    requests: 0,
    rejected: [],
    verifiedWithNew: 0,
    acknowledged: new Set(),
    failed: 0,
    onRotate: null,
    close: async () => undefined,
  };
  let rotating: Promise<void> | null = null;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      c.requests++;
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = plain(req.headers);
      for (const [library, judge] of Object.entries(judges)) {
        const byNew = judge(NEW, body, headers);
        const byOld = judge(OLD, body, headers);
        if (byNew !== null && byOld !== null) c.rejected.push({ library, reason: byOld });
        if (byNew === null && library === 'svix') c.verifiedWithNew++;
      }
      const id = headers['webhook-id'] ?? '';
      const n = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, n);
      if (failsAt(0.2, id, n)) {
        c.failed++;
        res.statusCode = 500;
      } else {
        c.acknowledged.add(id);
        if (c.acknowledged.size >= rotateAfter && rotating === null && c.onRotate) rotating = c.onRotate();
        res.statusCode = 204;
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  c.close = async () => {
    await rotating;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  return c;
}

function plain(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (typeof v === 'string') out[k] = v;
  return out;
}

async function graphql(
  apiUrl: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await fetch(`${apiUrl}/api/v3/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown };
  if (!body.data || body.errors) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return body.data;
}

async function login(apiUrl: string, model: ScenarioModel): Promise<string> {
  const client = model.clients[0] as ScenarioModel['clients'][number];
  const res = await fetch(`${apiUrl}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      audience: AUDIENCE,
    }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('webhook-timestamp as standard verifiers judge it', () => {
  it('every delivery of a served quickstart — five event types, 20 % of attempts failed, a secret rotation — verifies with standardwebhooks and svix at their default tolerance, lost 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-verifiers-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const consumer = await startConsumer(400);
    cleanups.push(() => consumer.close());
    const model = quickstart();
    let rotated = 0;
    const report = await runScenario(model, {
      durationMs: 20 * 60_000,
      dbPath: join(dir, 'store.sqlite'),
      api: { port: 0, audience: AUDIENCE },
      webhooks: {
        allow: ['127.0.0.1/8'],
        declared: TYPES.map((t) => ({
          orgId: model.org.id,
          input: { name: t.toLowerCase(), eventTypes: [t], url: consumer.url, secret: OLD },
        })),
      },
      onPlatform: ({ apiUrl }) => {
        // The consumer's operator rotates every subscription's secret through the API while deliveries flow.
        consumer.onRotate = async () => {
          const token = await login(apiUrl as string, model);
          const listed = (await graphql(apiUrl as string, token, '{ webhooks { id } }')).webhooks as Array<{
            id: string;
          }>;
          const updated = (
            await graphql(
              apiUrl as string,
              token,
              'mutation($i: [WebhookUpdateInput!]!) { updateWebhooks(input: $i) { id } }',
              { i: listed.map((w) => ({ id: w.id, rotate_secret: NEW })) },
            )
          ).updateWebhooks as unknown[];
          rotated = updated.length;
        };
      },
    });
    await consumer.close();
    const hooks = report.result.webhooks ?? [];
    const delivered = hooks.reduce((a, w) => a + w.delivered, 0);
    const lost = hooks.reduce((a, w) => a + w.deadLettered + w.pending, 0);
    console.log(
      `verifiers: ${consumer.requests} requests (${consumer.failed} answered 500), ${consumer.acknowledged.size} events acknowledged, ${consumer.verifiedWithNew} verified with the rotated secret; ` +
        `rejected ${consumer.rejected.length}; delivered ${delivered}, lost ${lost}`,
    );
    expect(report.perf.webhookTimestamps).toBe('wall');
    expect(hooks).toHaveLength(TYPES.length);
    for (const w of hooks) expect(w.delivered, w.name).toBeGreaterThan(0);
    expect(consumer.rejected.slice(0, 3)).toEqual([]);
    expect(consumer.failed).toBeGreaterThan(0.1 * consumer.requests);
    expect(rotated).toBe(TYPES.length);
    expect(consumer.verifiedWithNew).toBeGreaterThan(0);
    expect(lost).toBe(0);
    expect(consumer.acknowledged.size).toBe(delivered);
    expect(formatSummary(report)).not.toContain(SIMULATED_TIMESTAMPS_WARNING);
  }, 240_000);

  it('--webhook-timestamps simulated keeps the scenario-time header, which both libraries reject as too old, and the summary says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-verifiers-sim-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const consumer = await startConsumer(Infinity);
    cleanups.push(() => consumer.close());
    const model = quickstart();
    const report = await runScenario(model, {
      durationMs: 3 * 60_000,
      dbPath: join(dir, 'store.sqlite'),
      webhooks: {
        allow: ['127.0.0.1/8'],
        timestamps: 'simulated',
        declared: [
          {
            orgId: model.org.id,
            input: { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: consumer.url, secret: OLD },
          },
        ],
      },
    });
    await consumer.close();
    expect(consumer.requests).toBeGreaterThan(0);
    // Each request judged by both libraries: every one refused, for its age.
    expect(consumer.rejected).toHaveLength(2 * consumer.requests);
    expect(new Set(consumer.rejected.map((r) => r.reason))).toEqual(new Set(['Message timestamp too old']));
    expect(report.perf.webhookTimestamps).toBe('simulated');
    expect(formatSummary(report)).toContain(SIMULATED_TIMESTAMPS_WARNING);
  }, 120_000);
});
