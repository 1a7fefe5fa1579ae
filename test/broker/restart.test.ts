import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runScenario } from '../../src/run/run-scenario.js';

const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

function quickstartWith(faults: object[]): object {
  const doc = parse(readFileSync(QUICKSTART, 'utf8')) as Record<string, unknown>;
  return { ...doc, duration: '12m', faults };
}

describe('broker restart fault', () => {
  it('restarts the embedded broker mid-run; hives and cloud reconnect and nothing is lost, deterministically', async () => {
    const scenario = quickstartWith([{ kind: 'broker_restart', at: '5m' }]);
    const a = await runScenario(scenario);
    expect(a.result.delivery?.brokerRestarts).toBe(1);
    expect(a.result.messages.lost).toBe(0);
    expect(a.result.messages.packetsDelivered).toBe(a.result.messages.packetsSent);
    const b = await runScenario(scenario);
    expect(JSON.stringify(b.result)).toBe(JSON.stringify(a.result));
  });

  it('refuses a fault naming a hive the scenario does not have, located', async () => {
    const err = await runScenario(
      quickstartWith([{ kind: 'hive_outage', hive: 'Nope', at: '1m', duration: '1m' }]),
    ).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/faults\/0\/hive.*unknown hive `Nope`|unknown hive `Nope`/);
  });
});
