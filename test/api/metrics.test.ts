import { afterAll, describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { startTestReceiver, type TestReceiver } from '../webhooks/receiver-fixture.js';

/**
 * `/metrics` on a served run's platform (its own worker thread, as a fleet runs): scraped while
 * the run goes, its counters only rise; scraped at the end, they equal the run report — per
 * organisation, hive and subscription with the operator's `--metrics-token`, as platform totals
 * without a tenant's identifier to anyone else (issue 33, item 5).
 */
const receivers: TestReceiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

function quickstart(): ScenarioModel {
  const r = loadScenarioFile(new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
}

/** `name{labels} value` lines of the text exposition format, summed per metric name. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const key = m[2] ? `${m[1]}${m[2]}` : (m[1] as string);
    out.set(key, Number(m[3]));
    out.set(`${m[1]}:sum`, (out.get(`${m[1]}:sum`) ?? 0) + Number(m[3]));
  }
  return out;
}

const METRICS_TOKEN = 'scraper-token-0123456789';
const COUNTERS = [
  'occusim_messages_in_total',
  'occusim_batches_processed_total',
  'occusim_packets_processed_total',
  'occusim_occupancy_events_total',
  'occusim_webhook_deliveries_total',
  'occusim_ingest_lag_seconds_count',
];

describe('Prometheus /metrics on the served platform', () => {
  it('rises during a run and matches the run report at the end', async () => {
    const receiver = await startTestReceiver();
    receivers.push(receiver);
    const model = quickstart();
    let apiUrl = '';
    const scrapes: Array<Promise<Map<string, number>>> = [];
    const texts: string[] = [];
    const scrape = async (token?: string): Promise<Map<string, number>> => {
      const res = await fetch(
        `${apiUrl}/metrics`,
        token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
      );
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      if (token === undefined) texts.push(text);
      return parse(text);
    };
    let final = new Map<string, number>();
    let open = new Map<string, number>();
    const refused: number[] = [];
    const report = await runScenario(model, {
      durationMs: 30 * 60_000,
      platformThread: true,
      keepStore: false,
      api: { port: 0, audience: 'https://api.occusim.test', metricsToken: METRICS_TOKEN },
      webhooks: {
        allow: ['127.0.0.1/8'],
        declared: [
          { orgId: model.org.id, input: { name: 'rooms', eventTypes: ['ROOM_OCCUPANCY'], url: receiver.url } },
        ],
      },
      onPlatform: (ready) => {
        apiUrl = ready.apiUrl as string;
      },
      onProgress: () => {
        if (scrapes.length < 20) scrapes.push(scrape());
      },
      beforeClose: async () => {
        final = await scrape(METRICS_TOKEN);
        open = await scrape();
        for (const authorization of ['Bearer wrong-token-0123456789', 'Basic abc'])
          refused.push((await fetch(`${apiUrl}/metrics`, { headers: { authorization } })).status);
      },
    });
    const during = await Promise.all(scrapes);
    expect(during.length).toBeGreaterThan(3);
    // Monotone scrape to scrape, and the run's end above its start.
    for (const name of COUNTERS) {
      const series = [...during, final].map((m) => m.get(`${name}:sum`) ?? 0);
      for (let i = 1; i < series.length; i++)
        expect(series[i], `${name} scrape ${i}`).toBeGreaterThanOrEqual(series[i - 1] as number);
      expect(series.at(-1), name).toBeGreaterThan(series[0] as number);
    }
    const r = report.result;
    expect(final.get('occusim_batches_processed_total')).toBe(r.messages.batchesProcessed);
    expect(final.get('occusim_duplicate_batches_total')).toBe(r.messages.duplicateBatches);
    expect(final.get('occusim_dead_letters_total')).toBe(r.messages.deadLettered);
    expect(final.get('occusim_occupancy_events_total')).toBe(r.pipeline.eventsEmitted);
    expect(final.get('occusim_late_packets_total{window="inside"}')).toBe(r.pipeline.lateInWindow);
    expect(final.get('occusim_ingest_lag_seconds_count')).toBe(final.get('occusim_packets_processed_total'));
    const hook = r.webhooks?.[0];
    expect(hook?.delivered).toBeGreaterThan(0);
    expect(final.get(`occusim_webhook_deliveries_total{subscription="${hook?.id}",name="rooms"}`)).toBe(
      hook?.delivered,
    );
    expect(final.get('occusim_messages_out_total{channel="webhooks"}')).toBe(hook?.delivered);
    // The one hive heartbeats through the run: online at the end.
    const hive = model.hives[0] as ScenarioModel['hives'][number];
    expect(final.get(`occusim_hive_online{org="${model.org.id}",hive="${hive.id}",serial="${hive.serial}"}`)).toBe(1);
    expect(final.get(`occusim_sensors_online{org="${model.org.id}",state="online"}`)).toBe(model.sensors.length);
    // Without the token: the same totals, and nothing that names a tenant, a hive or a subscription.
    expect(refused).toEqual([401, 401]);
    expect(open.get('occusim_hives_online{state="online"}')).toBe(1);
    expect(open.get('occusim_sensors_online{state="online"}')).toBe(model.sensors.length);
    expect(open.get('occusim_webhook_deliveries_total')).toBe(hook?.delivered);
    expect(open.get('occusim_batches_processed_total')).toBe(r.messages.batchesProcessed);
    for (const text of texts) {
      for (const secret of [
        model.org.id,
        hive.id,
        hive.serial,
        hook?.id ?? 'none',
        'name="rooms"',
        'org=',
        'serial=',
        'subscription=',
      ])
        expect(text, secret).not.toContain(secret);
    }
  }, 120_000);
});
