import { createHash } from 'node:crypto';
import { z } from 'zod';
import { formatDuration, parseDuration } from '../core/time.js';

/**
 * Ramps (issue 29 item 3, docs/load-testing.md "Ramps"): the share of hives online over
 * simulated time. A hive not yet online has not started: its sensors generate nothing before it
 * comes online (counted as `notYetOnline`, not lost, so the ledger balances with lost 0), it
 * sends no heartbeat and its MQTT link is not connected. Every hive a step brings online
 * connects at that step's first delivery, together with the others: a reconnect storm on the
 * broker.
 */

/** Steps a ramp may have: a ramp is a shape, not a per-hive schedule. */
export const MAX_RAMP_STEPS = 64;

/** One step: from `atMs` after the start, `share` (0..1) of the hives are online. */
export interface RampStep {
  atMs: number;
  share: number;
}

const SHARE_RE = /^(\d+(?:\.\d+)?)%$/;

function shareOf(v: number | string): number | null {
  if (typeof v === 'number') return v >= 0 && v <= 1 ? v : null;
  const m = SHARE_RE.exec(v.trim());
  if (!m) return null;
  const pct = Number(m[1]);
  return pct <= 100 ? pct / 100 : null;
}

/** Why a list of steps is not a ramp (null: it is one): times strictly rising, shares never falling. */
function stepsProblem(steps: readonly RampStep[]): { index: number; message: string } | null {
  for (let i = 1; i < steps.length; i++) {
    const prev = steps[i - 1] as RampStep;
    const cur = steps[i] as RampStep;
    if (cur.atMs <= prev.atMs)
      return {
        index: i,
        message: `step times must rise: ${formatDuration(cur.atMs)} is not after ${formatDuration(prev.atMs)}`,
      };
    if (cur.share < prev.share)
      return {
        index: i,
        message: `the online share must not fall (${pct(cur.share)} after ${pct(prev.share)}): a ramp brings hives online, faults take them off`,
      };
  }
  return null;
}

const stepSchema = z.strictObject({
  at: z
    .union([z.literal(0), z.string()])
    .transform(String)
    .refine((t) => parseDuration(t) !== null || t.trim() === '0', { message: 'bad duration' })
    .describe('Simulated time after the start, e.g. 0, 30s, 5m'),
  online: z
    .union([z.number(), z.string()])
    .refine((v) => shareOf(v) !== null, { message: 'a share of the hives: 0..1 or 0%..100%' })
    .describe('Share of the hives online from then on: 0..1 or a percentage such as 10%'),
});

/** `ramp:` of a scenario file: `[{ at: 0, online: 10% }, { at: 5m, online: 100% }]`. */
export const rampSchema = z
  .array(stepSchema)
  .min(1)
  .max(MAX_RAMP_STEPS, { message: `a ramp has at most ${MAX_RAMP_STEPS} steps` })
  .superRefine((steps, ctx) => {
    const problem = stepsProblem(steps.map(stepModel));
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.index, 'at'], message: problem.message });
  })
  .describe(
    'Share of the hives online over simulated time (docs/load-testing.md, "Ramps"); hives before the first step are offline',
  );

export type RampFile = z.output<typeof rampSchema>;

function stepModel(s: RampFile[number]): RampStep {
  return { atMs: s.at.trim() === '0' ? 0 : (parseDuration(s.at) ?? 0), share: shareOf(s.online) ?? 0 };
}

export function rampModel(file: RampFile): RampStep[] {
  return file.map(stepModel);
}

export type RampParse = { ok: true; steps: RampStep[] } | { ok: false; col: number; message: string };

/** `--ramp 0:10%,5m:100%`: the same steps on the command line; errors name the 1-based column. */
export function parseRamp(spec: string): RampParse {
  if (spec.length > 4096) return { ok: false, col: 1, message: 'a ramp spec is at most 4096 characters' };
  const steps: RampStep[] = [];
  let col = 1;
  for (const part of spec.split(',')) {
    const colon = part.indexOf(':');
    if (colon < 0) return { ok: false, col, message: `'${part}' is not TIME:SHARE (e.g. 5m:50%)` };
    const at = part.slice(0, colon).trim();
    const atMs = at === '0' ? 0 : parseDuration(at);
    if (atMs === null) return { ok: false, col, message: `'${at}' is not a duration (0, 30s, 5m, 1h)` };
    const share = shareOf(part.slice(colon + 1));
    if (share === null)
      return { ok: false, col: col + colon + 1, message: `'${part.slice(colon + 1)}' is not a share: 0%..100%` };
    steps.push({ atMs, share });
    col += part.length + 1;
  }
  if (steps.length > MAX_RAMP_STEPS)
    return { ok: false, col: 1, message: `a ramp has at most ${MAX_RAMP_STEPS} steps` };
  const problem = stepsProblem(steps);
  if (problem) return { ok: false, col: columnOfStep(spec, problem.index), message: problem.message };
  return { ok: true, steps };
}

function columnOfStep(spec: string, index: number): number {
  return spec
    .split(',')
    .slice(0, index)
    .reduce((c, p) => c + p.length + 1, 1);
}

function pct(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

/**
 * When each hive comes online (epoch ms): a seeded choice, the hives ranked by
 * sha256(seed|hive id) (a pure function, so every thread that simulates a hive computes the same
 * instant), step k bringing the next ⌈share × hives⌉ − (already online) of the ranking online at
 * its time. A hive no step brings online is absent (offline for the whole run). Without a ramp
 * every hive is online from the start.
 */
export function hiveOnlineTimes(
  hiveIds: readonly string[],
  ramp: readonly RampStep[] | undefined,
  seed: number,
  startMs: number,
): Map<string, number> {
  const out = new Map<string, number>();
  if (!ramp || ramp.length === 0) {
    for (const id of hiveIds) out.set(id, startMs);
    return out;
  }
  const ranked = hiveIds
    .map((id) => ({ id, key: createHash('sha256').update(`${seed}|ramp|${id}`).digest('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
  let online = 0;
  for (const step of ramp) {
    const target = Math.min(ranked.length, Math.ceil(step.share * ranked.length - 1e-9));
    for (; online < target; online++) out.set((ranked[online] as { id: string }).id, startMs + step.atMs);
  }
  return out;
}

/** One line of the summary and the report: at a step, how many hives came online and how many are online. */
export interface RampProgress {
  atMs: number;
  cameOnline: number;
  online: number;
  hives: number;
}

/** The ramp's steps with the hives each brought online (the summary's "hives online over time"). */
export function rampProgress(
  ramp: readonly RampStep[],
  onlineAt: ReadonlyMap<string, number>,
  hives: number,
  startMs: number,
): RampProgress[] {
  let online = 0;
  return ramp.map((step) => {
    let came = 0;
    for (const t of onlineAt.values()) if (t === startMs + step.atMs) came++;
    online += came;
    return { atMs: step.atMs, cameOnline: came, online, hives };
  });
}

/** What `onlineTimesOf` needs of a scenario model (no import of model.ts: it imports this file). */
interface RampedModel {
  readonly hives: ReadonlyArray<{ readonly id: string }>;
  readonly ramp?: readonly RampStep[] | undefined;
  readonly rampSchedule?: Readonly<Record<string, number>> | undefined;
  readonly seed: number;
  readonly startMs: number;
}

/**
 * The ramp's choice resolved over the whole fleet (hive id → ms after the start), set on the run's
 * model before its hives are shared out among threads: a thread's model holds only its hives, and
 * a choice ranked over those would differ from the one ranked over all.
 */
export function rampSchedule(model: RampedModel): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [id, t] of hiveOnlineTimes(
    model.hives.map((h) => h.id),
    model.ramp,
    model.seed,
    0,
  ))
    out[id] = t;
  return out;
}

/** When each hive of the model comes online (epoch ms; absent: never): the resolved schedule if set, else ranked over the model's hives. */
export function onlineTimesOf(model: RampedModel): Map<string, number> {
  if (!model.ramp?.length)
    return hiveOnlineTimes(
      model.hives.map((h) => h.id),
      undefined,
      model.seed,
      model.startMs,
    );
  const schedule = model.rampSchedule ?? rampSchedule(model);
  return new Map(Object.entries(schedule).map(([id, t]) => [id, model.startMs + t]));
}
