import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { formatMerged, mergeReports } from '../run/report-merge.js';
import type { RunReport } from '../run/run-report.js';
import type { Flags, Io } from './io.js';
import { checkOutputFiles } from './preflight.js';

/** Largest report file read (a fleet's report is a few MB). */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

/** `occusim report merge a.json b.json … [--json] [--out merged.json]`: the shards' reports as the whole run's. */
export function reportMergeCommand(files: readonly string[], flags: Flags, io: Io): number {
  checkOutputFiles(flags, ['out']);
  const reports = files.map(readReport);
  const merged = mergeReports(reports, files);
  const json = `${JSON.stringify(merged, null, 2)}\n`;
  if (typeof flags.out === 'string') writeFileSync(flags.out, json);
  io.stdout.write(flags.json === true ? json : formatMerged(merged));
  return merged.ledger.packets.lost === 0 ? 0 : 1;
}

function readReport(file: string): RunReport {
  const size = statSync(file).size;
  if (size > MAX_REPORT_BYTES) throw new AppError(ErrorCodes.USAGE, `report merge: ${file} is ${size} bytes, more than ${MAX_REPORT_BYTES}`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AppError(ErrorCodes.USAGE, `report merge: ${file}: not JSON (${(err as Error).message})`);
  }
  if (!isRunReport(doc)) throw new AppError(ErrorCodes.USAGE, `report merge: ${file}: not a run report (written by occusim run --report)`);
  return doc;
}

function isRunReport(x: unknown): x is RunReport {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Partial<RunReport>;
  return typeof r.scenario === 'string' && typeof r.seed === 'number' && typeof r.result === 'object' && r.result !== null && typeof r.result.messages === 'object' && typeof r.result.traffic === 'object' && typeof r.result.presence === 'object';
}
