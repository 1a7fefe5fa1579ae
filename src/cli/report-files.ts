import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { RunArtefacts } from '../run/options.js';
import { reportDataset } from '../report/dataset.js';
import { reportHtml } from '../report/html.js';
import { writeTruth } from '../report/truth-file.js';
import { withTruth } from './consumer-expect.js';
import { stateNdjson } from '../webhooks/consumer-state.js';
import type { Flags } from './io.js';

/**
 * `occusim run … --truth truth.ndjson --html report.html --consumer-expect expected.ndjson`: the
 * files written from the run's artefacts at its end (docs/report.md, docs/load-testing.md).
 * Null when none of the flags is given.
 */
export function reportFileWriter(flags: Flags): ((a: RunArtefacts) => void) | null {
  const truthPath = pathFlag(flags, 'truth');
  const htmlPath = pathFlag(flags, 'html');
  const expectPath = pathFlag(flags, 'consumer-expect');
  if (truthPath === null && htmlPath === null && expectPath === null) return null;
  return ({ model, truth, data, result, verdicts, consumer }) => {
    if (expectPath !== null) writeFileSync(expectPath, stateNdjson(withTruth(consumer ?? [], truth)));
    if (truthPath !== null) {
      const fd = openSync(truthPath, 'w');
      try {
        // Buffered in 1 MiB chunks: a day of a fleet is millions of lines.
        let buf = '';
        writeTruth(model, truth, (line) => {
          buf += line;
          if (buf.length > 1 << 20) {
            writeSync(fd, buf);
            buf = '';
          }
        });
        writeSync(fd, buf);
      } finally {
        closeSync(fd);
      }
    }
    if (htmlPath !== null) writeFileSync(htmlPath, reportHtml(reportDataset(model, truth, data, result, verdicts)));
  };
}

function pathFlag(flags: Flags, name: 'truth' | 'html' | 'consumer-expect'): string | null {
  const v = flags[name];
  if (v === undefined) return null;
  if (typeof v !== 'string' || v === '') throw new AppError(ErrorCodes.USAGE, `--${name} needs a file path`);
  return v;
}
