import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { describeLocation } from '../store/location.js';
import { openStore } from '../store/open.js';
import { formatMerged, mergeReports, withStoreAccuracy, type MergedReport } from '../run/report-merge.js';
import type { RunReport } from '../run/run-report.js';
import { replayTruth, scenarioOfReports, storeAccuracy } from '../run/store-accuracy.js';
import type { Flags, Io } from './io.js';
import { checkOutputFiles } from './preflight.js';
import { existingStore } from './store-flag.js';

/** Largest report file read (a fleet's report is a few MB). */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

/**
 * `occusim report merge a.json b.json … [--json] [--out merged.json] [--store URL --scenario FILE]`:
 * the shards' reports as the whole run's; with the store the ingest processes shared, the whole
 * run's presence and traffic accuracy read from it against the scenario's replayed truth.
 */
export async function reportMergeCommand(files: readonly string[], flags: Flags, io: Io): Promise<number> {
  checkOutputFiles(flags, ['out']);
  const fromStore = typeof flags.store === 'string' || typeof flags.db === 'string';
  if (fromStore !== (typeof flags.scenario === 'string'))
    throw new AppError(
      ErrorCodes.USAGE,
      'report merge: --store and --scenario go together (the measured series and the truth they are compared with)',
    );
  const reports = files.map(readReport);
  let merged = mergeReports(reports, files);
  if (fromStore) merged = await accuracyFromStore(merged, reports, flags);
  const json = `${JSON.stringify(merged, null, 2)}\n`;
  if (typeof flags.out === 'string') writeFileSync(flags.out, json);
  io.stdout.write(flags.json === true ? json : formatMerged(merged));
  return merged.ledger.packets.lost === 0 ? 0 : 1;
}

async function accuracyFromStore(
  merged: MergedReport,
  reports: readonly RunReport[],
  flags: Flags,
): Promise<MergedReport> {
  const first = reports[0] as RunReport;
  const stopped = reports.findIndex((r) => (r as Partial<RunReport>).perf?.interrupted === true);
  if (stopped >= 0)
    throw new AppError(
      ErrorCodes.USAGE,
      `report merge --store: shard ${reports[stopped]?.shard?.index} was stopped before the end; the truth replayed is the whole run's`,
    );
  const model = scenarioOfReports(flags.scenario as string, first);
  const location = existingStore(flags, 'occusim report merge');
  const name = describeLocation(location);
  const store = await openStore(location);
  try {
    return withStoreAccuracy(merged, await storeAccuracy(model, replayTruth(model), store), name);
  } finally {
    await store.close();
  }
}

function readReport(file: string): RunReport {
  const size = statSync(file).size;
  if (size > MAX_REPORT_BYTES)
    throw new AppError(ErrorCodes.USAGE, `report merge: ${file} is ${size} bytes, more than ${MAX_REPORT_BYTES}`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AppError(ErrorCodes.USAGE, `report merge: ${file}: not JSON (${(err as Error).message})`);
  }
  if (!isRunReport(doc))
    throw new AppError(ErrorCodes.USAGE, `report merge: ${file}: not a run report (written by occusim run --report)`);
  return doc;
}

function isRunReport(x: unknown): x is RunReport {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Partial<RunReport>;
  return (
    typeof r.scenario === 'string' &&
    typeof r.seed === 'number' &&
    typeof r.result === 'object' &&
    r.result !== null &&
    typeof r.result.messages === 'object' &&
    typeof r.result.traffic === 'object' &&
    typeof r.result.presence === 'object'
  );
}
