/**
 * What repeats across runs at a receiver that several subscriptions share: each subscription's
 * own sequence of bodies. Each subscription is a delivery lane of its own, running
 * concurrently with the others (src/webhooks/lanes.ts), so their interleaving in the receiver's
 * NDJSON depends on the wall clock; the tests that compare runs give each subscription one
 * event type and compare the lines of each type, in arrival order.
 */
export function linesPerType(ndjson: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of ndjson.split('\n')) {
    if (line === '') continue;
    const type = String((JSON.parse(line) as { type?: unknown }).type);
    (out[type] ??= []).push(line);
  }
  return out;
}
