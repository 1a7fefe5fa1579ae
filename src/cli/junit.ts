/**
 * JUnit XML, the report format CI systems display: one <testsuite> per kind of check, one
 * <testcase> per threshold or conformance rule, a <failure> with the measured value or the
 * violations. Text is escaped, and characters XML 1.0 cannot carry are dropped.
 */
export interface JunitCase {
  name: string;
  classname: string;
  /** Absent: passed. */
  failure?: { message: string; details: string };
}

export interface JunitSuite {
  name: string;
  cases: readonly JunitCase[];
}

export function junitXml(suites: readonly JunitSuite[]): string {
  const tests = suites.reduce((a, s) => a + s.cases.length, 0);
  const failures = suites.reduce((a, s) => a + s.cases.filter((c) => c.failure).length, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="occusim" tests="${tests}" failures="${failures}" errors="0">`,
  ];
  for (const s of suites) {
    out.push(
      `  <testsuite name="${attr(s.name)}" tests="${s.cases.length}" failures="${s.cases.filter((c) => c.failure).length}" errors="0" skipped="0">`,
    );
    for (const c of s.cases) {
      const open = `    <testcase name="${attr(c.name)}" classname="${attr(c.classname)}"`;
      if (!c.failure) {
        out.push(`${open}/>`);
        continue;
      }
      out.push(
        `${open}>`,
        `      <failure message="${attr(c.failure.message)}" type="threshold">${text(c.failure.details)}</failure>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

// eslint-disable-next-line no-control-regex -- XML 1.0 forbids these characters outright
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

function text(s: string): string {
  return s.replace(NOT_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
}
