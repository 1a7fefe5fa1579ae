import { parseDuration } from '../core/time.js';
import type { FaultModel, NetworkModel, ScenarioModel } from './model.js';
import type { FaultFile, NetworkFile } from './network-schema.js';
import { error, type Ctx, type ModelLists } from './resolve-context.js';

/** What resolving faults reads of the loader's context: the findings, source pointers, hives and sensors. */
type FaultCtx = Pick<Ctx, 'findings' | 'pointerOf'> & { lists: Pick<ModelLists, 'hives' | 'sensors'> };

/** Defaults of the `network:` section (docs/scenario-format.md, "Network and faults"). */
export const DEFAULT_NETWORK: NetworkModel = {
  mesh: {
    txPowerDbm: 0,
    pathLossExponent: 3,
    refLossDb: 40,
    wallLossDb: 6,
    sensitivityDbm: -95,
    slotMs: 10,
    slotframeSlots: 101,
    maxRetries: 7,
    queueFrames: 256,
    batteryMah: 2600,
    healthIntervalMs: 5 * 60_000,
  },
  hive: { bufferBytes: 8 * 1024 * 1024, heartbeatIntervalMs: 60_000, ackTimeoutMs: 30_000, maxBatchPackets: 500 },
};

const dur = (text: string | undefined, fallback: number): number =>
  text === undefined ? fallback : (parseDuration(text) ?? fallback);

export function resolveNetwork(n: NetworkFile | undefined): NetworkModel {
  const m = n?.mesh;
  const d = DEFAULT_NETWORK.mesh;
  const h = n?.hive;
  const dh = DEFAULT_NETWORK.hive;
  return {
    mesh: {
      txPowerDbm: m?.tx_power ?? d.txPowerDbm,
      pathLossExponent: m?.path_loss_exponent ?? d.pathLossExponent,
      refLossDb: m?.reference_loss ?? d.refLossDb,
      wallLossDb: m?.wall_loss ?? d.wallLossDb,
      sensitivityDbm: m?.sensitivity ?? d.sensitivityDbm,
      slotMs: dur(m?.slot, d.slotMs),
      slotframeSlots: m?.slotframe ?? d.slotframeSlots,
      maxRetries: m?.retries ?? d.maxRetries,
      queueFrames: m?.queue ?? d.queueFrames,
      batteryMah: m?.battery_mah ?? d.batteryMah,
      healthIntervalMs: dur(m?.health_interval, d.healthIntervalMs),
    },
    hive: {
      bufferBytes: h?.buffer_bytes ?? dh.bufferBytes,
      heartbeatIntervalMs: dur(h?.heartbeat_interval, dh.heartbeatIntervalMs),
      ackTimeoutMs: dur(h?.ack_timeout, dh.ackTimeoutMs),
      maxBatchPackets: h?.max_batch ?? dh.maxBatchPackets,
    },
  };
}

/** The end of a fault that does not end (sensor_death): finite, so a model stays JSON. */
export const FOREVER_MS = Number.MAX_SAFE_INTEGER;

/** Resolves fault targets by name (after every floor is resolved); unknown names are located errors. */
export function resolveFaults(ctx: FaultCtx, faults: readonly FaultFile[] | undefined, startMs: number): FaultModel[] {
  const out: FaultModel[] = [];
  (faults ?? []).forEach((f, i) => {
    const fault = resolveFault(ctx, f, ['faults', i], startMs);
    if (fault !== null) out.push(fault);
  });
  return out.sort((a, b) => a.atMs - b.atMs);
}

function resolveFault(ctx: FaultCtx, f: FaultFile, path: Array<string | number>, startMs: number): FaultModel | null {
  const atMs = startMs + dur(f.at, 0);
  if (f.kind === 'sensor_death') {
    if (f.duration !== undefined) {
      error(
        ctx,
        [...path, 'duration'],
        'sensor_death has no duration: a dead sensor does not come back (sensor_offline is the one that does)',
      );
      return null;
    }
    const sensorIds = sensorsOf(ctx, f, path);
    return sensorIds === null
      ? null
      : { atMs, durationMs: FOREVER_MS - atMs, src: ctx.pointerOf(path), kind: f.kind, sensorIds };
  }
  const base = { atMs, durationMs: dur(f.duration, 0), src: ctx.pointerOf(path) };
  if (f.kind === 'platform_restart' || f.kind === 'ingest_kill' || f.kind === 'store_restart')
    return platformFault(ctx, f, f.kind, path, startMs, base);
  if (f.kind !== 'broker_restart' && base.durationMs <= 0) {
    error(ctx, [...path, 'duration'], `fault ${f.kind} needs a duration > 0`);
    return null;
  }
  switch (f.kind) {
    case 'broker_restart':
      return { ...base, kind: f.kind };
    case 'webhook_down':
      return { ...base, kind: f.kind, webhook: f.webhook ?? null };
    case 'hive_outage':
    case 'hive_reboot':
    case 'duplicate_batch': {
      const hiveIds = hivesNamed(ctx, f, path);
      return hiveIds === null ? null : { ...base, kind: f.kind, hiveIds };
    }
    case 'clock_skew': {
      const offsetMs = clockOffset(ctx, f, path);
      const hiveIds = hivesNamed(ctx, f, path);
      return hiveIds === null || offsetMs === null ? null : { ...base, kind: f.kind, hiveIds, offsetMs };
    }
    case 'sensor_offline':
    case 'battery_drain':
    case 'link_degradation': {
      const sensorIds = sensorsOf(ctx, f, path);
      if (sensorIds === null) return null;
      if (f.kind !== 'link_degradation') return { ...base, kind: f.kind, sensorIds };
      if (f.loss === undefined) {
        error(ctx, [...path, 'loss'], 'link_degradation needs `loss` (0..1)');
        return null;
      }
      return { ...base, kind: f.kind, sensorIds, loss: f.loss };
    }
  }
}

/** How long a `store_restart` keeps the store away when the fault says nothing: a fast restart of a database server. */
const DEFAULT_STORE_RESTART_MS = 5_000;
/**
 * Longest `store_restart`: the look-back (5 minutes). A restart, not an outage of the platform:
 * what the ingest could not store meanwhile comes again after the hives' ack timeout, mostly to
 * minutes not yet finalised (later data reopens its minute: loss-free either way, docs/occupancy.md).
 */
const MAX_STORE_RESTART_MS = 5 * 60_000;

/** Why each fault on the platform itself needs no duration (absent: it takes one). */
const INSTANT_BECAUSE: Partial<Record<FaultFile['kind'], string>> = {
  platform_restart: 'the run stops at `at` and is resumed from its store at once',
  ingest_kill: 'the killed ingest is replaced at once by one that resumes from the store',
};

/**
 * Faults on the platform (platform_restart, ingest_kill, store_restart): after the start (a
 * platform not yet up has nothing to restart or kill), with no target (they hit the run's one
 * platform), and timed as their kind says.
 */
function platformFault(
  ctx: FaultCtx,
  f: FaultFile,
  kind: 'platform_restart' | 'ingest_kill' | 'store_restart',
  path: Array<string | number>,
  startMs: number,
  base: { atMs: number; durationMs: number; src: string },
): FaultModel | null {
  const instant = INSTANT_BECAUSE[kind];
  if (instant !== undefined && f.duration !== undefined) {
    error(ctx, [...path, 'duration'], `${kind} has no duration: ${instant}`);
    return null;
  }
  const target = (['hive', 'sensors', 'webhook', 'loss', 'offset'] as const).find((k) => f[k] !== undefined);
  if (target !== undefined) {
    error(ctx, [...path, target], `${kind} takes no \`${target}\`: it hits the run's own platform`);
    return null;
  }
  if (base.atMs <= startMs) {
    error(
      ctx,
      [...path, 'at'],
      `${kind} must come after the start (at > 0s): a platform not yet started has nothing to ${kind === 'ingest_kill' ? 'kill' : 'restart'}`,
    );
    return null;
  }
  if (kind !== 'store_restart') return { ...base, kind };
  const durationMs = f.duration === undefined ? DEFAULT_STORE_RESTART_MS : base.durationMs;
  if (durationMs <= 0 || durationMs > MAX_STORE_RESTART_MS) {
    error(
      ctx,
      [...path, 'duration'],
      `store_restart keeps the store away for more than 0s and at most 5m (the look-back), got \`${f.duration}\``,
    );
    return null;
  }
  return { ...base, durationMs, kind };
}

/** Bound of a clock_skew offset: a hive off by more than a day is a misconfigured one, not a skewed clock. */
export const MAX_CLOCK_OFFSET_MS = 24 * 60 * 60_000;

function clockOffset(ctx: FaultCtx, f: FaultFile, path: Array<string | number>): number | null {
  if (f.offset === undefined) {
    error(ctx, [...path, 'offset'], 'clock_skew needs `offset`, a signed duration such as -30s or +2m');
    return null;
  }
  const sign = f.offset.startsWith('-') ? -1 : 1;
  const ms = parseDuration(f.offset.replace(/^[+-]/, ''));
  if (ms === null || ms === 0 || ms > MAX_CLOCK_OFFSET_MS) {
    error(
      ctx,
      [...path, 'offset'],
      `clock_skew offset must be non-zero and at most 1d either way, got \`${f.offset}\``,
    );
    return null;
  }
  return sign * ms;
}

function hivesNamed(ctx: FaultCtx, f: FaultFile, path: Array<string | number>): string[] | null {
  if (f.hive === undefined) {
    error(ctx, path, `fault ${f.kind} needs \`hive\``);
    return null;
  }
  const ids = ctx.lists.hives.filter((h) => h.name === f.hive).map((h) => h.id);
  if (ids.length === 0) error(ctx, [...path, 'hive'], `unknown hive \`${f.hive}\``);
  return ids.length === 0 ? null : ids;
}

function sensorsOf(ctx: FaultCtx, f: FaultFile, path: Array<string | number>): string[] | null {
  if (f.sensors === undefined && f.hive === undefined) {
    error(ctx, path, `fault ${f.kind} needs \`sensors\` or \`hive\``);
    return null;
  }
  const ids: string[] = [];
  if (f.hive !== undefined) {
    const hives = hivesNamed(ctx, f, path);
    if (hives === null) return null;
    // A loop, not push(...): a hive's sensors are bounded by the expansion only (a spread of ~120,000 overflows the stack).
    for (const s of ctx.lists.sensors) if (hives.includes(s.hiveId)) ids.push(s.id);
  }
  let ok = true;
  (f.sensors ?? []).forEach((name, j) => {
    const found = ctx.lists.sensors.filter((s) => s.name === name);
    if (found.length === 0) {
      error(ctx, [...path, 'sensors', j], `unknown sensor \`${name}\``);
      ok = false;
    }
    for (const s of found) ids.push(s.id);
  });
  return ok ? [...new Set(ids)] : null;
}

/**
 * A schedule's faults on a model already loaded (it replaces the model's own, as `--faults`
 * replaces a file's block): `occusim explore` loads and expands the scenario once, then
 * resolves each drawn schedule here, by the same rules and with the same refusals as the loader.
 */
export function faultsOnModel(
  model: ScenarioModel,
  faults: readonly FaultFile[],
): { ok: true; faults: FaultModel[] } | { ok: false; messages: string[] } {
  const ctx: FaultCtx = { findings: [], pointerOf: (path) => `/${path.join('/')}`, lists: model };
  const resolved = resolveFaults(ctx, faults, model.startMs);
  const errors = ctx.findings.filter((f) => f.severity === 'error');
  return errors.length === 0
    ? { ok: true, faults: resolved }
    : { ok: false, messages: errors.map((f) => `fault ${Number(f.path[1]) + 1}: ${f.message}`) };
}
