/**
 * What `webhook-timestamp` carries (issue 27 item 1). Standard Webhooks verifiers (npm
 * `standardwebhooks`, Svix's `Webhook.verify`) reject a delivery whose timestamp is more than
 * 5 minutes from their own clock, as replay protection: a run's simulated clock (the
 * scenario's date) failed 100 % of a served quickstart's deliveries at every consumer that
 * verifies them the standard way.
 *
 * - `wall` (default): the wall clock at each attempt, read through an injected `WallTime`.
 *   The body, `webhook-id`, the signature scheme and the order of deliveries stay deterministic;
 *   the timestamp (and so the signature's bytes) is the one part of a request that differs run to run.
 * - `simulated`: the platform clock at the attempt, as before: byte-identical requests for the
 *   same seed (captures, golden files), which standard verifiers reject as too old.
 */
export const WEBHOOK_TIMESTAMPS = ['wall', 'simulated'] as const;
export type WebhookTimestamps = (typeof WEBHOOK_TIMESTAMPS)[number];
export const DEFAULT_WEBHOOK_TIMESTAMPS: WebhookTimestamps = 'wall';

/** Narrows a flag's text; null when it is not one of WEBHOOK_TIMESTAMPS. */
export function webhookTimestampsOf(text: string): WebhookTimestamps | null {
  return (WEBHOOK_TIMESTAMPS as readonly string[]).includes(text) ? (text as WebhookTimestamps) : null;
}

/** The run summary's warning when the timestamps are simulated. */
export const SIMULATED_TIMESTAMPS_WARNING =
  'webhook-timestamp carries simulated time (--webhook-timestamps simulated): standard verifiers (standardwebhooks, svix) reject these deliveries as too old; drop the flag for wall-clock timestamps';
