import { z } from 'zod';

/**
 * `webhooks[].faults` of a scenario file: delivery faults the subscription suffers on purpose
 * (docs/load-testing.md; the platform applies them, webhooks/faults.ts). Each kind is a rate
 * (the share of events hit, 0..1) or an object with the rate and the kind's parameters. The
 * bounds are webhooks/faults.ts's FAULT_BOUNDS (a test pins that they agree; the scenario layer
 * does not import the platform's), so a bad value is a located `occusim validate` error.
 */
const rate = z.number().min(0).max(1).describe('Share of the events hit, 0..1');
const int = (lo: number, hi: number, what: string) => z.number().int().min(lo).max(hi).describe(what);

const withRate = <T extends z.ZodRawShape>(shape: T) => z.union([rate, z.strictObject({ rate, ...shape })]);

export const webhookFaultsSchema = z
  .strictObject({
    duplicate: withRate({}).optional().describe('The same request (webhook-id and body) sent twice'),
    reorder: withRate({ window: int(1, 256, 'Later requests it waits for, default 4').optional() })
      .optional()
      .describe('Held behind the next requests of the subscription'),
    delay: withRate({
      min_ms: int(0, 60_000, 'Least wait, ms (default 50)').optional(),
      max_ms: int(0, 60_000, 'Longest wait, ms (default 500)').optional(),
    })
      .refine((d) => typeof d === 'number' || (d.min_ms ?? 50) <= (d.max_ms ?? 500), {
        message: 'min_ms must not be above max_ms',
      })
      .optional()
      .describe('Sent after a uniform wait in [min_ms, max_ms] of wall time'),
    burst: withRate({
      size: int(2, 1024, 'Held requests released together, default 8').optional(),
      hold_ms: int(1, 10_000, 'Longest hold, ms (default 500)').optional(),
    })
      .optional()
      .describe('Held, then released together'),
    revise: withRate({})
      .optional()
      .describe('A _1M event preceded by an earlier revision of its minute with another value'),
    timeout: withRate({}).optional().describe("The first attempt's connection dropped mid-request (retried)"),
  })
  .describe(
    'Delivery faults on purpose, seeded: the same events are hit in every run of the seed (docs/load-testing.md)',
  );

export type WebhookFaultsFile = z.output<typeof webhookFaultsSchema>;

/** The faults as the platform takes them (webhooks/faults.ts `WebhookFaults`), defaults applied. */
export interface WebhookFaultsModel {
  duplicate?: { rate: number };
  reorder?: { rate: number; window: number };
  delay?: { rate: number; minMs: number; maxMs: number };
  burst?: { rate: number; size: number; holdMs: number };
  revise?: { rate: number };
  timeout?: { rate: number };
}

export function webhookFaultsModel(f: WebhookFaultsFile): WebhookFaultsModel {
  const r = (v: number | { rate: number }): number => (typeof v === 'number' ? v : v.rate);
  const o = <T extends object>(v: number | T): Partial<T> => (typeof v === 'number' ? {} : v);
  const m: WebhookFaultsModel = {};
  if (f.duplicate !== undefined) m.duplicate = { rate: r(f.duplicate) };
  if (f.reorder !== undefined) m.reorder = { rate: r(f.reorder), window: o(f.reorder).window ?? 4 };
  if (f.delay !== undefined)
    m.delay = { rate: r(f.delay), minMs: o(f.delay).min_ms ?? 50, maxMs: o(f.delay).max_ms ?? 500 };
  if (f.burst !== undefined)
    m.burst = { rate: r(f.burst), size: o(f.burst).size ?? 8, holdMs: o(f.burst).hold_ms ?? 500 };
  if (f.revise !== undefined) m.revise = { rate: r(f.revise) };
  if (f.timeout !== undefined) m.timeout = { rate: r(f.timeout) };
  return m;
}
