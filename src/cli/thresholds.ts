import { formatMetricValue, type Verdict } from '../run/expectations.js';
import type { RunReport } from '../run/run-report.js';
import type { JunitSuite } from './junit.js';

/** The verdict of every threshold, one line each, with the measured value beside it. */
export function formatThresholds(verdicts: readonly Verdict[]): string {
  const width = Math.max(9, ...verdicts.map((v) => v.expectation.text.length));
  const lines = ['', 'Thresholds', `  ${'threshold'.padEnd(width)}  ${'measured'.padStart(14)}  verdict`];
  for (const v of verdicts) {
    lines.push(
      `  ${v.expectation.text.padEnd(width)}  ${formatMetricValue(v.expectation.metric, v.measured).padStart(14)}  ${v.passed ? 'pass' : 'FAIL'}`,
    );
  }
  const failed = verdicts.filter((v) => !v.passed).length;
  lines.push(`  ${verdicts.length} threshold(s): ${failed === 0 ? 'all passed' : `${failed} failed`}`, '');
  return lines.join('\n');
}

/** One JUnit test case per threshold of a run (a run without thresholds: its lost-data check alone). */
export function thresholdSuite(report: RunReport): JunitSuite {
  const classname = `occusim.run.${report.scenario}`;
  const lost = report.result.messages.lost;
  const cases = [
    {
      name: 'messages are not lost',
      classname,
      ...(lost > 0 ? { failure: { message: `${lost} message(s) lost`, details: `messages.lost = ${lost}` } } : {}),
    },
    ...(report.expectations ?? []).map((v) => ({
      name: v.expectation.text,
      classname,
      ...(v.passed
        ? {}
        : {
            failure: {
              message: `${v.expectation.text}: measured ${formatMetricValue(v.expectation.metric, v.measured)}`,
              details: `${v.expectation.metric} = ${v.measured ?? 'not measured'}`,
            },
          }),
    })),
  ];
  if (report.perf.interrupted)
    cases.push({
      name: 'the run reached its end',
      classname,
      failure: { message: 'interrupted before the end', details: 'the run was stopped (SIGINT)' },
    });
  return { name: `occusim run ${report.scenario} (seed ${report.seed})`, cases };
}
