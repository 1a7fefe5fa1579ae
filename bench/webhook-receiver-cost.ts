/**
 * `npm run bench -- webhook-receiver [rounds] [depth] [spinUs]`: the CPU `occusim receive`
 * spends per request, verifying (signed requests, a secret) and not (no secret), measured from
 * /proc of the receiver's process while 20,000 pre-signed requests reach it in bursts of `depth`
 * (default 16) on one keep-alive connection (`post`); a small `depth` imitates a slower client,
 * whose requests arrive in smaller bursts, and `spinUs` makes the client burn that many µs per
 * answer between bursts. Then each variant's `verify` alone in a hot loop. Old and new receivers
 * in one machine state: `OCCUSIM_BENCH_RECEIVERS=old=/copy/src/webhooks/receiver.ts,new` (a
 * path, or a name alone for this tree's), interleaved round by round.
 * `OCCUSIM_BENCH_CPU_PROF=dir`: each receiver writes a V8 CPU profile there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventMetadata } from '../src/cloud/events.js';
import { catalogueFromScenario } from '../src/assets/from-scenario.js';
import { systemWallTime } from '../src/core/clock.js';
import { loadScenarioFile } from '../src/scenario/load.js';
import { signedHeaders, type verify } from '../src/webhooks/signing.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const N = 20_000;
const WARM = 2_000;
let receivers = 0;

async function startChild(
  module: string | null,
  secret: string,
  out: string,
): Promise<{ child: ChildProcess; port: number }> {
  const file = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));
  const env = { ...process.env };
  if (module) env.OCCUSIM_BENCH_RECEIVER_MODULE = module;
  const prof = process.env.OCCUSIM_BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.OCCUSIM_BENCH_CPU_PROF}`]
    : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', file, secret, out], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  return { child, port };
}

/** User and system CPU ms of a process, from /proc (Linux). */
function cpuOf(pid: number): { user: number; sys: number } {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return { user: Number(fields[11]) * 10, sys: Number(fields[12]) * 10 };
}

function spin(us: number): void {
  if (us <= 0) return;
  const end = process.hrtime.bigint() + BigInt(Math.round(us * 1000));
  while (process.hrtime.bigint() < end);
}

interface Request {
  body: string;
  headers: Record<string, string>;
}

/**
 * The requests as bytes on one keep-alive connection, in bursts of `depth` written at once (as the
 * engine's sender writes a turn's requests in one write), the next burst when the last one is
 * answered. Fixed bursts of pre-built bytes keep the receiver's reads the same from run to run
 * (one read per burst) whatever the machine's load does to the client; `spinUs` per answer
 * slows the client down.
 */
async function post(port: number, requests: readonly Buffer[], spinUs: number, depth: number): Promise<void> {
  const socket = connect({ port, host: '127.0.0.1', noDelay: true });
  await once(socket, 'connect');
  let sent = 0;
  let answered = 0;
  let tail = '';
  const sendMore = (k: number): void => {
    const batch: Buffer[] = [];
    for (; k > 0 && sent < requests.length; k--) batch.push(requests[sent++] as Buffer);
    if (batch.length > 0) socket.write(batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
  };
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      // Answers are counted by their status lines (with or without a chunked empty body).
      const text = tail + chunk.toString('latin1');
      let k = 0;
      for (let i = text.indexOf('HTTP/1.1 '); i >= 0 && i + 12 <= text.length; i = text.indexOf('HTTP/1.1 ', i + 12)) {
        if (!text.startsWith('HTTP/1.1 200', i))
          return reject(new Error(`bench webhook-receiver: answered ${text.slice(i, i + 12)}`));
        k++;
        tail = text.slice(i + 12);
      }
      if (k === 0) tail = text;
      tail = tail.slice(-12);
      answered += k;
      spin(spinUs * k);
      if (answered === requests.length) resolve();
      else if (answered === sent) sendMore(depth);
    });
    sendMore(depth);
  });
  socket.destroy();
}

/** Receiver CPU µs per request (user, system) over N requests after a warm-up. */
async function measure(
  module: string | null,
  signed: boolean,
  requests: readonly Buffer[],
  spinUs: number,
  depth: number,
  dir: string,
): Promise<{ user: number; sys: number; wallUs: number }> {
  const rx = await startChild(module, signed ? SECRET : '', join(dir, `rx-${++receivers}.ndjson`));
  try {
    await post(rx.port, requests.slice(0, WARM), spinUs, depth);
    const c0 = cpuOf(rx.child.pid as number);
    const t0 = systemWallTime();
    await post(rx.port, requests.slice(WARM), spinUs, depth);
    const wallUs = ((systemWallTime() - t0) * 1000) / N;
    const c1 = cpuOf(rx.child.pid as number);
    return { user: ((c1.user - c0.user) * 1000) / N, sys: ((c1.sys - c0.sys) * 1000) / N, wallUs };
  } finally {
    rx.child.kill();
  }
}

/** The verification alone (`verify` of the variant's signing module), in a hot loop over distinct signed requests: CPU µs per call. */
async function hotLoop(module: string | null, requests: readonly Request[]): Promise<number> {
  const signing = module ? module.replace(/receiver\.(ts|js)$/, 'signing.$1') : '../src/webhooks/signing.js';
  const { verify: check } = (await import(signing)) as { verify: typeof verify };
  const bodies = requests.map((r) => Buffer.from(r.body));
  let ok = 0;
  const run = (): number => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < requests.length; i++) {
      const h = (requests[i] as Request).headers;
      if (check([SECRET], h, bodies[i] as Buffer, Number(h['webhook-timestamp']), Infinity).ok) ok++;
    }
    const t = process.cpuUsage(t0);
    return (t.user + t.system) / requests.length;
  };
  run();
  const us = Math.min(run(), run(), run());
  if (ok !== requests.length * 4) throw new Error('bench webhook-receiver: a signature did not verify');
  return us;
}

export async function runWebhookReceiverBench(
  root: string,
  roundsArg?: string,
  depthArg?: string,
  spinArg?: string,
): Promise<void> {
  const rounds = Number(roundsArg ?? 3);
  const depth = Number(depthArg ?? 16);
  const spinUs = Number(spinArg ?? 0);
  const loaded = loadScenarioFile(join(root, 'scenarios/quickstart.yaml'));
  if (!loaded.ok) throw new Error('quickstart does not load');
  const model = loaded.model;
  const rooms = model.rooms.map((r) => r.id);
  const meta = new EventMetadata(catalogueFromScenario(model));
  const requests: Request[] = Array.from({ length: N + WARM }, (_, i) => {
    const body = JSON.stringify(
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
    );
    return {
      body,
      headers: {
        'content-type': 'application/json',
        ...signedHeaders([SECRET], `event_${i}`, 1_700_000_000 + i, body),
      },
    };
  });
  // As undici writes a request (header order and names included).
  const wire = requests.map((r) => {
    const h = Object.entries(r.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return Buffer.from(
      `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n${h}content-length: ${Buffer.byteLength(r.body)}\r\n\r\n${r.body}`,
    );
  });
  const variants = (process.env.OCCUSIM_BENCH_RECEIVERS ?? 'this').split(',').map((v) => {
    const [name, path] = v.split('=');
    return { name: name as string, module: path ?? null };
  });
  const dir = mkdtempSync(join(tmpdir(), 'occusim-bench-rx-'));
  console.log(
    `\nwebhook receiver: CPU per request (µs, user + system), ${N} requests in bursts of ${depth}, client spin ${spinUs} µs per answer`,
  );
  try {
    const runs = new Map<string, { plain: number[]; signed: number[] }>(
      variants.map((v) => [v.name, { plain: [], signed: [] }]),
    );
    for (let r = 1; r <= rounds; r++) {
      for (const v of variants) {
        const plain = await measure(v.module, false, wire, spinUs, depth, dir);
        const signed = await measure(v.module, true, wire, spinUs, depth, dir);
        const fmt = (m: { user: number; sys: number; wallUs: number }): string =>
          `${(m.user + m.sys).toFixed(1)} (${m.user.toFixed(1)} + ${m.sys.toFixed(1)}; wall ${m.wallUs.toFixed(1)})`;
        console.log(
          `  round ${r} ${v.name.padEnd(8)} unsigned ${fmt(plain)}  signed ${fmt(signed)}  check ${(signed.user + signed.sys - plain.user - plain.sys).toFixed(1)}`,
        );
        runs.get(v.name)?.plain.push(plain.user + plain.sys);
        runs.get(v.name)?.signed.push(signed.user + signed.sys);
      }
    }
    // Medians: a shared machine slows some rounds; the middle one is the steadier figure.
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    for (const [name, m] of runs) {
      console.log(
        `  median ${name.padEnd(8)} unsigned ${median(m.plain).toFixed(1)}  signed ${median(m.signed).toFixed(1)}  check ${(median(m.signed) - median(m.plain)).toFixed(1)} µs per request`,
      );
    }
    for (const v of variants)
      console.log(
        `  ${v.name.padEnd(8)} verify() alone, hot loop over ${N} distinct requests: ${(await hotLoop(v.module, requests.slice(0, N))).toFixed(2)} µs CPU per call`,
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
