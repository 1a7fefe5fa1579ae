import { describe, expect, it } from 'vitest';
import { createProgressBar, describeProgress, progressFigures } from '../../src/cli/progress.js';

/** A terminal line as a person sees it: \r returns to column 0, ESC[2K erases the line. */
function terminal(columns = 160): {
  stream: { write(c: string): boolean; isTTY: boolean; columns: number };
  visible(): string;
  writes: string[];
} {
  let line: string[] = [];
  let col = 0;
  const writes: string[] = [];
  return {
    writes,
    stream: {
      isTTY: true,
      columns,
      write(chunk: string) {
        writes.push(chunk);
        for (let i = 0; i < chunk.length; i++) {
          if (chunk[i] === '\r') col = 0;
          else if (chunk.startsWith('\x1b[2K', i)) {
            line = [];
            i += 3;
          } else line[col++] = chunk[i] as string;
        }
        return true;
      },
    },
    visible: () =>
      line
        .map((c) => c ?? ' ')
        .join('')
        .trimEnd(),
  };
}

describe('progress figures', () => {
  it('give the rate against real time, packets per second and the ETA at max speed', () => {
    const f = progressFigures(3_600_000, 10_800_000, 50_000, 10_000, 'max');
    expect(f.realTimeFactor).toBe(360);
    expect(f.packetsPerS).toBe(5000);
    expect(f.etaMs).toBe(20_000);
    expect(f.lagMs).toBeNull();
    expect(describeProgress(f)).toBe(' 33%  1h of 3h simulated · ×360 real time · 5,000 packets/s · ETA 20s');
  });

  it('give the lag behind the pace at a real-time speed, and the ETA at that pace', () => {
    const f = progressFigures(55_000, 600_000, 100, 60_000, 1);
    expect(f.lagMs).toBe(5000);
    expect(f.etaMs).toBe(545_000);
    expect(describeProgress(f)).toContain('lag 5.0 s');
    expect(describeProgress(f)).toContain('ETA 10m');
  });
});

describe('the progress line on a terminal', () => {
  it('leaves no stale characters when a shorter line follows a longer one, and is cleared at the end', () => {
    const term = terminal();
    let t = 0;
    const bar = createProgressBar(term.stream, { now: () => t, redrawEveryMs: 0 });
    t = 1000;
    bar.update(5_000_000, 10_800_000, 1_234_567);
    const long = term.visible();
    expect(long).toMatch(/simulating .* 46% .*1,234,567 packets\/s/);
    t = 2000;
    bar.update(10_800_000, 10_800_000); // shorter: no packets, no ETA
    const short = term.visible();
    expect(short.length).toBeLessThan(long.length);
    expect(short).toMatch(/100% {2}3h of 3h simulated · ×5,400 real time$/);
    expect(short).not.toMatch(/packets/);
    for (const w of term.writes) expect(w.startsWith('\r\x1b[2K')).toBe(true);
    bar.done();
    expect(term.visible()).toBe('');
  });

  it('never writes past the terminal width (a wrapped line could not be redrawn)', () => {
    const term = terminal(40);
    const bar = createProgressBar(term.stream, { now: () => 5000 });
    bar.update(1000, 10_000, 10);
    expect(term.visible().length).toBeLessThanOrEqual(39);
  });
});

describe('the start of simulated time', () => {
  it('counts the rate and the lag from begin(), not from the start-up before it', () => {
    const lines: string[] = [];
    let t = 0;
    const bar = createProgressBar({ write: (c) => lines.push(c) > 0 }, { now: () => t, speed: 1 });
    t = 6_000; // six seconds of start-up: not lag
    bar.begin();
    t = 16_000;
    bar.update(10_000, 300_000, 100);
    t = 27_000;
    bar.update(21_000, 300_000, 200);
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toMatch(/×1\.0 real time .* lag 0\.0 s\n$/);
  });
});

describe('progress in a log (not a terminal)', () => {
  it('writes a plain line every 10 s of wall time, nothing for a short run', () => {
    const lines: string[] = [];
    let t = 0;
    const bar = createProgressBar({ write: (c) => lines.push(c) > 0 }, { now: () => t, speed: 10 });
    for (t = 0; t <= 25_000; t += 500) bar.update(t * 10, 600_000, t);
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toMatch(/^simulating: \d+% .* lag \d+\.\d s\n$/);
    expect(lines.join('')).not.toContain('\r');
    const quiet: string[] = [];
    let u = 0;
    const short = createProgressBar({ write: (c) => quiet.push(c) > 0 }, { now: () => u });
    for (u = 0; u < 9000; u += 1000) short.update(u, 9000, 0);
    expect(quiet).toEqual([]);
  });
});
