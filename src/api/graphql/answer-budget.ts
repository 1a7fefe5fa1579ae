import { ErrorCodes } from '../../core/errors.js';
import type { FastifyInstance } from 'fastify';
import { ANSWER_BUDGET_BYTES } from './limits.js';

/**
 * The GraphQL answer's byte budget, checked after execution and before the answer is sent
 * (issue 33 item 7). The estimate at validation (limits.ts, `maxValues`) refuses most large
 * answers before any resolver runs; this catches what it cannot see (long names, polygons of
 * many vertices, lists longer than assumed). The size is counted without building the JSON
 * text, and the count stops as soon as it passes the budget: an answer over it costs no
 * second copy. An answer over the budget leaves as `data: null` with one error, code
 * `ANSWER_TOO_LARGE`.
 */
export const ANSWER_TOO_LARGE = ErrorCodes.ANSWER_TOO_LARGE;

/** JSON length of a string without escapes counted: a lower bound, exact for plain text. */
const textBytes = (s: string): number => Buffer.byteLength(s, 'utf8') + 2;

/**
 * Bytes of `JSON.stringify(value)` (escapes aside), counted until `limit` is passed; then some
 * number above `limit`. Iterative: a deep answer does not grow the stack.
 */
export function jsonBytesUpTo(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const v = stack.pop();
    if (v === null || v === undefined) total += 4;
    else if (typeof v === 'string') total += textBytes(v);
    else if (typeof v === 'number' || typeof v === 'boolean') total += String(v).length;
    else if (Array.isArray(v)) {
      total += 1 + Math.max(1, v.length);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v);
      total += 1 + Math.max(1, entries.length);
      for (const [k, item] of entries) {
        total += textBytes(k) + 1;
        stack.push(item);
      }
    }
  }
  return total;
}

/** Replaces an answer over `budget` bytes by the `ANSWER_TOO_LARGE` error (mercurius sends the execution object it resolved). */
export function registerAnswerBudget(app: FastifyInstance, budget: number = ANSWER_BUDGET_BYTES): void {
  app.graphql.addHook('onResolution', async (execution) => {
    const result = execution as { data?: unknown; errors?: unknown[] };
    if (result.data === null || result.data === undefined) return;
    const bytes = jsonBytesUpTo(result.data, budget);
    if (bytes <= budget) return;
    result.data = null;
    result.errors = [
      {
        message: `the answer exceeds the budget of ${budget} bytes of JSON: select fewer fields or filter the lists (ids, floor_ids)`,
        extensions: { code: ANSWER_TOO_LARGE },
      },
    ];
  });
}
