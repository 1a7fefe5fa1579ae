import { spawnSync } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { runScenario } from '../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { describeWithBinaries } from '../support/external-binaries.js';
import { startTestReceiver, type TestReceiver } from '../webhooks/receiver-fixture.js';

/**
 * Prometheus' own tool judges `/metrics`: `promtool check metrics` (Debian package
 * `prometheus`) reads a scrape of a served quickstart run — counters, gauges, the ingest-lag
 * histogram and the per-subscription webhook series all present — and reports no format error
 * and no lint problem (names, units, `_total` suffixes, HELP text). Whatever labels the scrape
 * carries (tenant labels or not), the tool is the judge of the text we serve.
 */
const receivers: TestReceiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

describeWithBinaries(['promtool'], 'promtool check metrics on a served run', ({ promtool }) => {
  it('finds no problem in a scrape taken at the end of a quickstart run with webhooks', async () => {
    const loaded = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
    if (!loaded.ok) throw new Error('quickstart does not load');
    const model = loaded.model;
    const receiver = await startTestReceiver();
    receivers.push(receiver);
    let apiUrl = '';
    let scrape = '';
    await runScenario(model, {
      durationMs: 10 * 60_000,
      keepStore: false,
      api: { port: 0, audience: 'https://api.occusim.test' },
      webhooks: {
        allow: ['127.0.0.1/8'],
        declared: [
          { orgId: model.org.id, input: { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: receiver.url } },
        ],
      },
      onPlatform: (ready) => {
        apiUrl = ready.apiUrl as string;
      },
      beforeClose: async () => {
        scrape = await (await fetch(`${apiUrl}/metrics`)).text();
      },
    });
    // The scrape is not trivially clean: counters and the histogram are in it (the
    // per-tenant series may be withheld from an anonymous scrape; promtool judges what is served).
    for (const name of [
      'occusim_batches_processed_total',
      'occusim_occupancy_events_total',
      'occusim_ingest_lag_seconds_bucket',
      'occusim_messages_out_total',
    ]) {
      expect(scrape, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    const check = spawnSync(promtool as string, ['check', 'metrics'], {
      input: scrape,
      encoding: 'utf8',
      timeout: 30_000,
    });
    // promtool prints each problem as `name: problem` and exits non-zero on any.
    expect({ status: check.status, out: `${check.stdout}${check.stderr}`.trim() }).toEqual({ status: 0, out: '' });
  }, 120_000);
});
