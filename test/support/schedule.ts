import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';
import type { FaultFile } from '../../src/scenario/network-schema.js';

/** A fault schedule a test writes as text (docs/scenario-format.md, "Fault schedules"); a mistake in it fails the test at once. */
export function schedule(text: string): FaultFile[] {
  const r = parseFaultSchedule(text);
  if (!r.ok) throw new Error(`schedule ${JSON.stringify(text)}, column ${r.col}: ${r.message}`);
  return r.faults;
}
