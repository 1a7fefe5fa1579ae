/**
 * `npm run bench -- webhooks`: signed, durable webhook deliveries per second into a receiver
 * in another process (it verifies every signature), against plain unsigned POSTs of the same
 * bodies from the same client (undici, one pipelined keep-alive connection) in the same run;
 * then the enqueue → 2xx latency at half the measured rate. Targets: ≥ 5,000/s, ≥ 0.7× the
 * baseline, p99 < 50 ms at half rate.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector';
import { catalogueFromScenario } from '../src/assets/from-scenario.js';
import { EventMetadata, eventId } from '../src/cloud/events.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { sqliteStore, sqliteWebhookStore } from '../src/store/sqlite-async.js';
import { SqliteWebhookStore } from '../src/store/sqlite-webhooks.js';
import type { Delivery, DeliveryInsert } from '../src/store/webhook-port.js';
import { VirtualClock, systemWallTime } from '../src/core/clock.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import { AddressPolicy } from '../src/webhooks/address-policy.js';
import { WebhookEngine } from '../src/webhooks/engine.js';
import { Sender } from '../src/webhooks/sender.js';
import { WebhookService } from '../src/webhooks/service.js';
import { validateCreate } from '../src/webhooks/subscription.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const N = 20_000;
/** Deliveries a second one endpoint needs for fleet.yaml's DETECTIONS at 1× (issue 29 item 4). */
const FLEET_RATE = 30_000;
const CORES = 2;

/**
 * The ceiling the CPU per delivery sets, and which side sets it: the sender and the receiver are
 * one thread each (neither goes faster than 1 s / its µs), and together they share the machine's
 * cores (2 cores / their sum). `storeUs`: the sender's durable store work (fan-out), part of its µs.
 */
function cpuLimit(clientUs: number, rxUs: number, storeUs: number): string {
  const bounds = [
    {
      what: `sender CPU (${clientUs.toFixed(0)} µs a delivery${storeUs > 0 ? `, ${storeUs.toFixed(0)} µs of it the store's fan-out` : ''}: one thread)`,
      rate: 1e6 / clientUs,
    },
    { what: `receiver CPU (${rxUs.toFixed(0)} µs a delivery: one thread)`, rate: 1e6 / rxUs },
    {
      what: `both on ${CORES} cores (${(clientUs + rxUs).toFixed(0)} µs a delivery)`,
      rate: (CORES * 1e6) / (clientUs + rxUs),
    },
  ].sort((a, b) => a.rate - b.rate);
  const first = bounds[0] as (typeof bounds)[number];
  const need = (CORES * 1e6) / FLEET_RATE;
  return `at most ${Math.round(first.rate).toLocaleString('en-US')}/s, bound by ${first.what}; ${FLEET_RATE.toLocaleString('en-US')}/s needs ≤ ${need.toFixed(0)} µs a delivery for both sides together and ≤ ${(1e6 / FLEET_RATE).toFixed(0)} µs on each`;
}

/** `OCCUSIM_BENCH_CPU_PROF=dir`: the receivers write V8 CPU profiles there (run the bench itself with `node --cpu-prof`). */
const profileArgs = (): string[] =>
  process.env.OCCUSIM_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.OCCUSIM_BENCH_CPU_PROF}`] : [];

/**
 * With `OCCUSIM_BENCH_CPU_PROF=dir`, the client's CPU profile of one phase (baseline or signed)
 * only, written as `client-<phase>.cpuprofile`: a whole-process `--cpu-prof` mixes start-up,
 * both phases and the half-rate run.
 */
async function profiled<T>(phase: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.OCCUSIM_BENCH_CPU_PROF;
  if (!dir) return work();
  const session = new Session();
  session.connect();
  const post = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(join(dir, `client-${phase}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/** The signed deliveries' receiver: verifies, dedupes, counts and writes NDJSON to `out`, as `occusim receive --secret --out` does. */
async function startChild(out: string): Promise<{ child: ChildProcess; port: number }> {
  const file = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));
  const child = spawn(process.execPath, [...profileArgs(), '--import', 'tsx', file, SECRET, out], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  return { child, port };
}

/**
 * CPU ms (user + system) a process has used: this one's from `process.cpuUsage`, a child's from
 * /proc (Linux; null elsewhere). Where the time goes decides what can be made faster: on a
 * 2-core machine the client and the receiver share the cores.
 */
function cpuMs(pid?: number, kernelOnly = false): number | null {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return ((kernelOnly ? 0 : u.user) + u.system) / 1000;
  }
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return ((kernelOnly ? 0 : Number(fields[11])) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return null;
  }
}

const diff = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);
const perDelivery = (ms: number | null, n: number): string =>
  ms === null ? 'n/a' : `${Math.round((ms * 1000) / n)} µs`;

/**
 * Plain POSTs of the bodies through the engine's own HTTP client (a `Sender`: same connection,
 * pipelining and write batching), unsigned, no store, to a receiver started without a secret:
 * it checks nothing, as a plain endpoint would, and dedupes, counts and writes the same NDJSON
 * as the signed one (a POST without `webhook-id` is deduped by its body's `id`: before session
 * 6 the receiver took every such POST for a duplicate of the first and wrote one line in all,
 * so the baseline receiver skipped the work the signed one did). What the signed run costs more is then the
 * signing, the durable outbox and the verification, not a different client.
 */
async function baseline(port: number, bodies: readonly string[], concurrency: number): Promise<number> {
  const policy = new AddressPolicy(['127.0.0.1/8']);
  const sender = new Sender({ policy, concurrency });
  const subscription = validateCreate(
    policy,
    'org_bench',
    'webhook_plain',
    { eventTypes: ['ROOM_OCCUPANCY'], url: `http://127.0.0.1:${port}/` },
    SECRET,
    'baseline',
  );
  const headers = { 'content-type': 'application/json' };
  const t0 = systemWallTime();
  const outcomes = await Promise.all(bodies.map((body) => sender.send({ subscription, body, headers, nowMs: 0 })));
  const s = (systemWallTime() - t0) / 1000;
  await sender.close();
  if (outcomes.some((o) => o.kind !== 'delivered')) throw new Error('bench webhooks: a baseline POST failed');
  return bodies.length / s;
}

/**
 * The durable outbox alone, by CPU per delivery, on a store of its own: the fan-out's insert
 * (4,096 a transaction, as the engine's), the due reads (keyset rounds of `round`), the
 * delivered outcome (one transaction a round) — the store's share of the signed client's
 * extra cost, without the HTTP around it.
 */
function outboxAlone(
  dir: string,
  bodies: readonly string[],
  round: number,
): { insert: number; due: number; delivered: number } {
  const store = new SqliteWebhookStore(join(dir, 'outbox-alone.sqlite'));
  try {
    const rows: DeliveryInsert[] = bodies.map((body, i) => ({
      subscriptionId: 'webhook_alone',
      eventId: eventId('ROOM_OCCUPANCY', 'room', i * 1000, 0),
      eventType: 'ROOM_OCCUPANCY',
      eventTimestampMs: i * 1000,
      body,
      enqueuedAtMs: 0,
      nextAttemptMs: 0,
    }));
    const c0 = cpuMs() as number;
    for (let i = 0; i < rows.length; i += 4096) store.enqueue(rows.slice(i, i + 4096));
    const insert = (cpuMs() as number) - c0;
    const c1 = cpuMs() as number;
    let page = store.due('webhook_alone', 0, round);
    let due = (cpuMs() as number) - c1;
    let delivered = 0;
    while (page.length > 0) {
      const c2 = cpuMs() as number;
      store.recordAttempts(page.map((d) => ({ id: d.id, result: 'delivered', atMs: 1 })));
      const c3 = cpuMs() as number;
      page = store.dueAfter('webhook_alone', 0, page[page.length - 1] as Delivery, round);
      due += (cpuMs() as number) - c3;
      delivered += c3 - c2;
    }
    const us = (ms: number): number => (ms * 1000) / rows.length;
    return { insert: us(insert), due: us(due), delivered: us(delivered) };
  } finally {
    store.close();
  }
}

/** A positive integer argument, or the default. */
function intArg(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 4096)
    throw new Error(`bench webhooks: ${name} is an integer in 1..4096, got ${text}`);
  return n;
}

/**
 * `npm run bench -- webhooks [concurrency] [round]`: requests in flight per endpoint (the
 * engine's and the baseline's alike, default 16) and deliveries read per round (default 256).
 */
export async function runWebhooksBench(root: string, concurrencyArg?: string, roundArg?: string): Promise<void> {
  const CONCURRENCY = intArg(concurrencyArg, 'concurrency', 16);
  const ROUND = intArg(roundArg, 'round', 256);
  const loaded = loadScenarioFile(join(root, 'scenarios/quickstart.yaml'));
  if (!loaded.ok) throw new Error('quickstart does not load');
  const model = loaded.model;
  const rooms = model.rooms.map((r) => r.id);
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-hooks-'));
  const signedRx = await startChild(join(dir, 'received.ndjson'));
  const plainRx = await (async () => {
    const file = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));
    // No secret (nothing verified), but the same NDJSON output as the signed receiver's: the two
    // receivers differ only by the signature check, so the ratio prices signing, outbox and check.
    const args = [...profileArgs(), '--import', 'tsx', file, '', join(dir, 'plain.ndjson')];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve) =>
      child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    return { child, port };
  })();
  try {
    const clock = new VirtualClock(model.startMs);
    const events = new SqliteStore(join(dir, 'store.sqlite'));
    // The engine awaits the stores' asynchronous ports, as the platform's does.
    const store = sqliteWebhookStore(join(dir, 'store.sqlite'));
    const outbox = sqliteStore(events);
    const policy = new AddressPolicy(['127.0.0.1/8']);
    const service = await WebhookService.open(store, policy, () => SECRET);
    await service.create(model.org.id, [
      { name: 'bench', eventTypes: ['ROOM_OCCUPANCY'], url: `http://127.0.0.1:${signedRx.port}/` },
    ]);
    const sender = new Sender({ policy, concurrency: CONCURRENCY });
    const engine = await WebhookEngine.open({
      service,
      store,
      outbox: (a) => outbox.events(a),
      metadata: new EventMetadata(catalogueFromScenario(model)),
      clock,
      seed: 1,
      sender,
      batch: ROUND,
      wallTime: systemWallTime,
    });
    let k = 0;
    const emit = (n: number): void => {
      const rows = [];
      for (let i = 0; i < n; i++, k++) {
        const spaceId = rooms[k % rooms.length] as string;
        const t = model.startMs + k * 1000;
        rows.push({
          eventId: eventId('ROOM_OCCUPANCY', spaceId, t, 0),
          type: 'ROOM_OCCUPANCY',
          spaceId,
          minuteMs: t,
          value: k % 7,
          revision: 0,
          emittedAtMs: t,
        });
      }
      events.writeEvents(rows);
    };
    // Same bodies for the baseline, built the way the engine builds them.
    const meta = new EventMetadata(catalogueFromScenario(model));
    const bodies = Array.from({ length: N }, (_, i) =>
      JSON.stringify(
        meta.envelope({
          id: i,
          eventId: `event_${i}`,
          type: 'ROOM_OCCUPANCY',
          spaceId: rooms[i % rooms.length] as string,
          minuteMs: model.startMs + i * 1000,
          value: i % 7,
          revision: 0,
          emittedAtMs: 0,
        }),
      ),
    );
    const cpu0 = {
      client: cpuMs(),
      rx: cpuMs(plainRx.child.pid),
      clientK: cpuMs(undefined, true),
      rxK: cpuMs(plainRx.child.pid, true),
    };
    const plain = await profiled('baseline', () => baseline(plainRx.port, bodies, CONCURRENCY));
    const cpuPlain = {
      client: (cpuMs() as number) - (cpu0.client as number),
      rx: diff(cpuMs(plainRx.child.pid), cpu0.rx),
      clientK: diff(cpuMs(undefined, true), cpu0.clientK),
      rxK: diff(cpuMs(plainRx.child.pid, true), cpu0.rxK),
    };
    emit(N);
    const cpu1 = {
      client: cpuMs(),
      rx: cpuMs(signedRx.child.pid),
      clientK: cpuMs(undefined, true),
      rxK: cpuMs(signedRx.child.pid, true),
    };
    const t0 = systemWallTime();
    // The fan-out (event outbox → delivery outbox, one synchronous step) by CPU, not wall time:
    // on a loaded machine the wall time of a synchronous step counts other processes' turns.
    let fanOutCpuMs = 0;
    await profiled('signed', async () => {
      const f0 = cpuMs() as number;
      await engine.fanOut();
      fanOutCpuMs = (cpuMs() as number) - f0;
      await engine.advance();
    });
    const signed = N / ((systemWallTime() - t0) / 1000);
    const cpuSigned = {
      client: (cpuMs() as number) - (cpu1.client as number),
      rx: diff(cpuMs(signedRx.child.pid), cpu1.rx),
      clientK: diff(cpuMs(undefined, true), cpu1.clientK),
      rxK: diff(cpuMs(signedRx.child.pid, true), cpu1.rxK),
    };
    const delivered = (await engine.stats()).subscriptions[0]?.delivered ?? 0;
    // Half rate: chunks every 10 ms (enqueue, then the engine's round), latency from the engine.
    const perTick = Math.max(1, Math.round(signed / 2 / 100));
    const half = await WebhookEngine.open({
      service,
      store,
      outbox: (a) => outbox.events(a),
      metadata: meta,
      clock,
      seed: 1,
      sender,
      batch: ROUND,
      wallTime: systemWallTime,
    });
    await half.advance(); // catch up with the cursor
    const end = systemWallTime() + 3000;
    while (systemWallTime() < end) {
      const tick = systemWallTime();
      emit(perTick);
      await half.advance();
      const wait = 10 - (systemWallTime() - tick);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const st = await half.stats();
    console.log('\nwebhooks: signed durable deliveries into a receiver in another process (verifying signatures)');
    console.log(
      `  baseline unsigned POSTs:  ${Math.round(plain).toLocaleString('en-US')}/s (${N} bodies, pipelining ${CONCURRENCY}; engine rounds of ${ROUND})`,
    );
    console.log(
      `  signed + durable:         ${Math.round(signed).toLocaleString('en-US')}/s (${delivered} delivered) — ${(signed / plain).toFixed(2)}× baseline (target ≥ 0.7×, ≥ 5,000/s)`,
    );
    console.log(
      `  CPU per delivery: client ${perDelivery(cpuSigned.client, N)} (baseline ${perDelivery(cpuPlain.client, N)}; fan-out into the outbox ${perDelivery(fanOutCpuMs, N)} of it), ` +
        `receiver ${perDelivery(cpuSigned.rx, N)} (baseline ${perDelivery(cpuPlain.rx, N)})`,
    );
    // The kernel's share (system time): the socket writes and reads, and waking the peer.
    console.log(
      `    of which in the kernel: client ${perDelivery(cpuSigned.clientK, N)} (baseline ${perDelivery(cpuPlain.clientK, N)}), receiver ${perDelivery(cpuSigned.rxK, N)} (baseline ${perDelivery(cpuPlain.rxK, N)})`,
    );
    // Client and receiver share the two cores: when they take turns (a loaded machine), the
    // rate follows their summed CPU per delivery, which the machine's other load moves less.
    if (cpuSigned.rx !== null && cpuPlain.rx !== null) {
      const signedUs = ((cpuSigned.client + cpuSigned.rx) * 1000) / N;
      const plainUs = ((cpuPlain.client + cpuPlain.rx) * 1000) / N;
      console.log(
        `  CPU per delivery, client + receiver: signed ${Math.round(signedUs)} µs, baseline ${Math.round(plainUs)} µs — ${(plainUs / signedUs).toFixed(2)}× by CPU`,
      );
    }
    // Issue 29 item 4: fleet.yaml's DETECTIONS at 1× need 30,000 signed durable deliveries a
    // second to one endpoint. What bounds the rate on this machine, from the CPU each delivery
    // costs: the sender's thread alone, the receiver's thread alone, or both sharing the two cores.
    if (cpuSigned.rx !== null && cpuPlain.rx !== null) {
      console.log(
        `  keep-up at fleet rate (${FLEET_RATE.toLocaleString('en-US')}/s, fleet.yaml DETECTIONS at 1×): signed ×${(signed / FLEET_RATE).toFixed(2)}, baseline ×${(plain / FLEET_RATE).toFixed(2)}`,
      );
      for (const [name, c] of [
        ['signed', cpuSigned],
        ['baseline', cpuPlain],
      ] as const) {
        const limit = cpuLimit(
          (c.client * 1000) / N,
          ((c.rx as number) * 1000) / N,
          name === 'signed' ? (fanOutCpuMs * 1000) / N : 0,
        );
        console.log(`    ${name}: ${limit}`);
      }
    }
    // Deliveries in flight live through young-generation collections, so runs under a
    // NODE_OPTIONS semi-space size (it reaches the receivers too) are told apart in the output;
    // it measured no difference beyond the noise (bench/README.md, webhooks, "hooks-cpu").
    const semi = /--max-semi-space-size[= ](\d+)/.exec(process.env.NODE_OPTIONS ?? '');
    console.log(
      `  V8 semi-space (NODE_OPTIONS, every process): ${semi ? `${semi[1]} MB (--max-semi-space-size)` : "Node's default"}`,
    );
    console.log(
      `  at half rate (${perTick * 100}/s): enqueue → 2xx p50 ${st.latencyP50Ms.toFixed(1)} ms, p99 ${st.latencyP99Ms.toFixed(1)} ms (target p99 < 50 ms)`,
    );
    // The baseline receiver did the signed one's work (dedupe, count, NDJSON line) for every
    // body: its file was flushed long ago (50 ms after the last line; the signed phase took seconds).
    const plainLines = readFileSync(join(dir, 'plain.ndjson'), 'utf8').split('\n').length - 1;
    if (plainLines !== N)
      throw new Error(`bench webhooks: the baseline receiver wrote ${plainLines} NDJSON lines for ${N} POSTs`);
    const alone = outboxAlone(dir, bodies, ROUND);
    console.log(
      `  the outbox alone (CPU per delivery): insert ${alone.insert.toFixed(1)} µs, due read ${alone.due.toFixed(1)} µs, delivered outcome ${alone.delivered.toFixed(1)} µs`,
    );
    await sender.close();
    await store.close();
    events.close();
  } finally {
    signedRx.child.kill();
    plainRx.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
