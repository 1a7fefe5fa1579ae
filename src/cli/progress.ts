import { formatDuration } from '../core/time.js';

/** A one-line progress bar on a TTY stream (stderr), redrawn in place. */
export interface ProgressBar {
  update(doneMs: number, totalMs: number): void;
  done(): void;
}

export function createProgressBar(stream: NodeJS.WriteStream, label: string): ProgressBar {
  const width = 30;
  let last = -1;
  return {
    update(doneMs, totalMs) {
      const frac = totalMs > 0 ? Math.min(1, doneMs / totalMs) : 1;
      const pct = Math.floor(frac * 100);
      if (pct === last) return;
      last = pct;
      const filled = Math.round(frac * width);
      const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
      stream.write(`\r${label} ${bar} ${String(pct).padStart(3)}%  ${formatDuration(doneMs)} of ${formatDuration(totalMs)} simulated`);
    },
    done() {
      stream.write('\r\x1b[2K');
    },
  };
}
