import { formatDuration } from '../core/time.js';

/**
 * Progress of a run on stderr. On a terminal: one line redrawn in place (cleared first, and
 * cut to the terminal's width, so no stale characters remain) with the simulated time, the
 * rate (× real time, packets/s), the ETA, and at a real-time speed the lag behind the pace.
 * Elsewhere (CI logs, a pipe): a plain line every `plainEveryMs` of wall time, so a long run
 * shows it is alive without filling the log; a short run prints nothing.
 */
export interface ProgressBar {
  /**
   * Simulated time starts now: the rate, the ETA and the lag count wall time from here, not from
   * the bar's creation (a fleet's start-up of several seconds would read as lag all run long).
   */
  begin(): void;
  update(doneMs: number, totalMs: number, packetsSent?: number): void;
  done(): void;
}

export interface ProgressStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  label?: string;
  /** The run's speed: 'max', or F× real time (then the line shows the lag behind that pace). */
  speed?: 'max' | number;
  /** Wall clock, ms (injected in tests). */
  now?: () => number;
  /** Plain-line mode: one line per this much wall time (default 10 s). */
  plainEveryMs?: number;
  /** Terminal mode: redraw at most this often (default 100 ms) unless the percentage changes. */
  redrawEveryMs?: number;
}

export interface ProgressFigures {
  fraction: number;
  doneMs: number;
  totalMs: number;
  /** Simulated ms per wall ms. */
  realTimeFactor: number | null;
  packetsPerS: number | null;
  etaMs: number | null;
  /** How far simulated time is behind the requested pace (real-time speeds only), ms. */
  lagMs: number | null;
}

/** The figures of one progress report, from the run's start (wall `startWall`) to wall `nowWall`. */
export function progressFigures(
  doneMs: number,
  totalMs: number,
  packets: number | undefined,
  wallMs: number,
  speed: 'max' | number,
): ProgressFigures {
  const fraction = totalMs > 0 ? Math.min(1, Math.max(0, doneMs / totalMs)) : 1;
  const rate = wallMs > 0 && doneMs > 0 ? doneMs / wallMs : null;
  const remaining = Math.max(0, totalMs - doneMs);
  const etaMs = speed === 'max' ? (rate ? remaining / rate : null) : remaining / speed;
  return {
    fraction,
    doneMs,
    totalMs,
    realTimeFactor: rate,
    packetsPerS: packets !== undefined && wallMs > 0 ? (packets * 1000) / wallMs : null,
    etaMs,
    lagMs: speed === 'max' ? null : Math.max(0, wallMs * speed - doneMs),
  };
}

/** `42%  1h15m of 3h simulated · ×812 real time · 3,210 packets/s · ETA 12s [· lag 0.2 s]` */
export function describeProgress(f: ProgressFigures): string {
  const parts = [
    `${String(Math.floor(f.fraction * 100)).padStart(3)}%  ${formatDuration(f.doneMs)} of ${formatDuration(f.totalMs)} simulated`,
  ];
  if (f.realTimeFactor !== null)
    parts.push(
      `×${f.realTimeFactor >= 10 ? Math.round(f.realTimeFactor).toLocaleString('en-US') : f.realTimeFactor.toFixed(1)} real time`,
    );
  if (f.packetsPerS !== null) parts.push(`${Math.round(f.packetsPerS).toLocaleString('en-US')} packets/s`);
  if (f.etaMs !== null && f.fraction < 1) parts.push(`ETA ${wallDuration(f.etaMs)}`);
  if (f.lagMs !== null) parts.push(`lag ${(f.lagMs / 1000).toFixed(1)} s`);
  return parts.join(' · ');
}

function wallDuration(ms: number): string {
  if (ms < 60_000) return `${Math.ceil(ms / 1000)}s`;
  return formatDuration(Math.ceil(ms / 60_000) * 60_000);
}

export function createProgressBar(stream: ProgressStream, opts: ProgressOptions = {}): ProgressBar {
  const now = opts.now ?? (() => performance.now());
  const label = opts.label ?? 'simulating';
  const speed = opts.speed ?? 'max';
  let start = now();
  const tty = stream.isTTY === true;
  const plainEvery = opts.plainEveryMs ?? 10_000;
  const redrawEvery = opts.redrawEveryMs ?? 100;
  let lastPct = -1;
  let lastAt = -Infinity;
  let drawn = false;
  return {
    begin() {
      start = now();
      lastAt = -Infinity;
    },
    update(doneMs, totalMs, packets) {
      const t = now();
      const f = progressFigures(doneMs, totalMs, packets, t - start, speed);
      const pct = Math.floor(f.fraction * 100);
      if (tty) {
        if (pct === lastPct && t - lastAt < redrawEvery) return;
        const width = 20;
        const filled = Math.round(f.fraction * width);
        const line = `${label} ${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${describeProgress(f)}`;
        const cols = stream.columns && stream.columns > 10 ? stream.columns - 1 : 120;
        // Clear the line, then write at most one terminal row: a wrapped line could not be redrawn in place.
        stream.write(`\r\x1b[2K${[...line].slice(0, cols).join('')}`);
        drawn = true;
      } else {
        if (t - lastAt < plainEvery || t - start < plainEvery) return;
        stream.write(`${label}: ${describeProgress(f).trim()}\n`);
      }
      lastPct = pct;
      lastAt = t;
    },
    done() {
      if (tty && drawn) stream.write('\r\x1b[2K');
    },
  };
}
