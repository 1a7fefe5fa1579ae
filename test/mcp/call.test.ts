import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_PROGRESS_TOKEN,
  NO_CALL,
  PROGRESS_GAP_MS,
  Progress,
  progressTokenOf,
  whileActive,
  type Call,
} from '../../src/mcp/call.js';

/** The per-call context (issue 28, item 5): pacing of progress, the token's bounds, waiting while cancellable. */
const SEED = 2805;

function recorder() {
  let now = 0;
  const sent: Array<{ progress: number; total?: number | undefined; message?: string | undefined; at: number }> = [];
  const progress = new Progress(async (p) => void sent.push({ ...p, at: now }), { now: () => now });
  return { progress, sent, advance: (ms: number) => void (now += ms) };
}

describe('Progress', () => {
  it('sends the first step, the last one planned, and between them at most one per gap', () => {
    const { progress, sent, advance } = recorder();
    progress.plan(4);
    progress.step('a');
    advance(10);
    progress.step('b');
    advance(PROGRESS_GAP_MS);
    progress.step('c');
    advance(1);
    progress.step('d');
    expect(sent.map((s) => [s.progress, s.total, s.message])).toEqual([
      [1, 4, 'a'],
      [3, 4, 'c'],
      [4, 4, 'd'],
    ]);
  });

  it('never lets progress fall or pass its total, however steps and plans interleave', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ plan: fc.nat(5) }), fc.record({ step: fc.nat(250) })), { maxLength: 60 }),
        (ops) => {
          const { progress, sent, advance } = recorder();
          for (const op of ops) {
            if ('plan' in op) progress.plan(op.plan);
            else {
              advance(op.step);
              progress.step('x');
            }
          }
          for (const [i, s] of sent.entries()) {
            expect(s.total).toBeGreaterThanOrEqual(s.progress);
            if (i > 0) expect(s.progress).toBeGreaterThan((sent[i - 1] as (typeof sent)[number]).progress);
          }
          // A step that completes the plan is always told, so the client sees the end.
          if (progress.done > 0 && progress.done === progress.total) expect(sent.at(-1)?.progress).toBe(progress.done);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('counts without sending when the client gave no token', () => {
    const progress = new Progress(null, { now: () => 0 });
    progress.plan(2);
    progress.step('a');
    progress.step('b');
    progress.step('c');
    expect([progress.done, progress.total]).toEqual([3, 3]);
  });
});

describe('progressTokenOf', () => {
  it('takes a string or an integer, and nothing when none is given', () => {
    expect(progressTokenOf({ _meta: { progressToken: 'abc' } }, 'tools/call')).toBe('abc');
    expect(progressTokenOf({ _meta: { progressToken: 7 } }, 'tools/call')).toBe(7);
    expect(progressTokenOf({}, 'tools/call')).toBeUndefined();
    expect(progressTokenOf({ _meta: {} }, 'tools/call')).toBeUndefined();
  });

  it.each([[{ a: 1 }], [1.5], [''], ['x'.repeat(MAX_PROGRESS_TOKEN + 1)], [null], [true], [2 ** 60]])(
    'refuses %j as invalid params naming the field',
    (progressToken) => {
      let err: unknown;
      try {
        progressTokenOf({ _meta: { progressToken } as never }, 'tools/call');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((err as McpError).message).toContain('params._meta.progressToken');
    },
  );
});

describe('whileActive', () => {
  it('stops waiting at once when the call is cancelled, and the shared work goes on', async () => {
    const ac = new AbortController();
    const call: Call = { signal: ac.signal, progress: new Progress(null, { now: () => 0 }) };
    let finish: (v: number) => void = () => undefined;
    const work = new Promise<number>((r) => (finish = r));
    const waiting = whileActive(call, work);
    ac.abort(new Error('bye'));
    await expect(waiting).rejects.toThrow('cancelled: bye');
    finish(5);
    expect(await work).toBe(5);
    await expect(whileActive(call, Promise.resolve(1))).rejects.toThrow('cancelled');
  });

  it('passes the work through for a call nobody can cancel', async () => {
    expect(await whileActive(NO_CALL, Promise.resolve(3))).toBe(3);
  });
});
