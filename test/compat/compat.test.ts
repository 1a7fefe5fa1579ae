import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getIntrospectionQuery } from 'graphql';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueFromScenario } from '../../src/assets/from-scenario.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { trafficSpaces } from '../../src/cloud/traffic-occupancy.js';
import { assetNames, checkAssets, checkPoint, naiveTrafficOccupancy } from './agree.js';
import { post, serveRun, type ServedRun } from './served-run.js';

/**
 * The compatibility suite: GraphQL documents and reporting/stats bodies exactly as clients of
 * the reference platform send them (test/compat/*.graphql, *.json; variables typed as those
 * clients type them), each sent over real HTTP to a finished, served run of quickstart and
 * of office-day. Each must pass validation, answer 200, and agree with the scenario's assets
 * and the run's store. `{{name}}` placeholders are the run's own ids and times (`values`).
 */
const here = new URL('.', import.meta.url).pathname;
const files = readdirSync(here).sort();
const documents = files.filter((f) => f.endsWith('.graphql'));
const bodies = files.filter((f) => f.endsWith('.json'));

const RUNS: ReadonlyArray<{ scenario: string; duration: string; durationMs: number }> = [
  { scenario: 'quickstart.yaml', duration: '40m', durationMs: 40 * 60_000 },
  // From 06:00 to 09:00 in Berlin: the team arrives through the counted stairs from 08:00.
  { scenario: 'office-day.yaml', duration: '3h', durationMs: 3 * 3_600_000 },
];

describe.each(RUNS)(
  'clients of the reference platform, unchanged, against a served $scenario run',
  ({ scenario, duration, durationMs }) => {
    let run: ServedRun;
    let store: SqliteStore;
    let values: Record<string, string>;

    function fill(text: string): string {
      return text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
        const v = values[k];
        if (v === undefined) throw new Error(`no value for {{${k}}}`);
        return v;
      });
    }

    async function gql(
      query: string,
      variables: Record<string, unknown> = {},
    ): Promise<{ status: number; json: { data?: unknown; errors?: Array<{ message: string }> } }> {
      const r = await post(run, '/api/v3/graphql', { query, variables });
      return { status: r.status, json: r.json as { data?: unknown; errors?: Array<{ message: string }> } };
    }

    beforeAll(async () => {
      run = await serveRun(scenario, duration, durationMs);
      store = new SqliteStore(run.db);
      const m = run.model;
      const room = m.rooms.find((x) => x.name === 'Open office')!;
      const floor = m.floors.find((f) => f.id === room.floorId)!;
      const zone = m.sites.find((x) => x.id === floor.siteId)!.timezone;
      const day = DateTime.fromMillis(m.startMs, { zone });
      // Rooms with traffic occupancy: one with a door left uncounted, and another (all counted where the scenario has one).
      const traffic = trafficSpaces(catalogueFromScenario(m).snapshot()).filter((x) => x.kind === 'room');
      const partial = traffic.find((x) => x.doors && x.doors.counted < x.doors.total)!;
      const other =
        traffic.find((x) => x.spaceId !== partial.spaceId && x.doors?.counted === x.doors?.total) ??
        traffic.find((x) => x.spaceId !== partial.spaceId)!;
      values = {
        tz: zone,
        site: floor.siteId,
        building: floor.buildingId,
        floor: floor.id,
        room: room.id,
        room2: m.rooms.find((x) => x.floorId === floor.id && x.id !== room.id && x.capacity !== null)!.id,
        partial_room: partial.spaceId,
        traffic_room: other.spaceId,
        zone: m.zones.find((z) => z.floorId === floor.id)!.id,
        sensor: m.sensors.find((s) => s.mode === 'presence')!.id,
        sensor_mac: m.sensors[0]!.mac,
        traffic_sensor: m.sensors.find((s) => s.mode === 'traffic')!.id,
        hive: m.hives.find((x) => x.floorId === floor.id)!.id,
        hive_serial: m.hives.find((x) => x.floorId === floor.id)!.serial,
        rfc_start: new Date(m.startMs).toISOString(),
        rfc_stop: new Date(run.endMs).toISOString(),
        date_start: day.toISODate() as string,
        date_stop: day.plus({ days: 1 }).toISODate() as string,
      };
      const tag = await gql('mutation($name: String!) { createTag(input: { name: $name }) { id } }', {
        name: 'compat',
      });
      values.tag = (tag.json.data as { createTag: { id: string } }).createTag.id;
    }, 180_000);

    afterAll(async () => {
      store?.close();
      await run?.stop();
    });

    describe('the compatibility suite', () => {
      it('the suite holds GraphQL documents and reporting bodies', () => {
        expect(documents.length).toBeGreaterThanOrEqual(13);
        expect(bodies.length).toBeGreaterThanOrEqual(11);
      });

      it.each(documents)('GraphQL document %s validates, answers 200 and agrees with the catalogue', async (file) => {
        const text = readFileSync(join(here, file), 'utf8');
        const vars = /^# variables: (.*)$/m.exec(text);
        const variables = vars ? (JSON.parse(fill(vars[1] as string)) as Record<string, unknown>) : {};
        const res = await gql(text, variables);
        expect(res.json.errors, JSON.stringify(res.json.errors)).toBeUndefined();
        expect(res.status).toBe(200);
        const seen = checkAssets(res.json.data, assetNames(run.model), new Set([values.tag as string]));
        // Introspection names types, not assets; every other document reads some.
        if (!/__schema/.test(text)) expect(seen).toBeGreaterThan(0);
      });

      it.each(bodies)('request body %s answers 200 and agrees with the store', async (file) => {
        const spec = JSON.parse(fill(readFileSync(join(here, file), 'utf8'))) as {
          path: string;
          body: Record<string, unknown>;
        };
        const res = await post(run, spec.path, spec.body);
        expect(res.status, res.text).toBe(200);
        const data = (res.json as { data: unknown }).data;
        if (spec.path.endsWith('/stats'))
          return checkStats(spec.body, data as Record<string, Record<string, number | null>>);
        const window = spec.body.window as { function?: string; every: string };
        const filter = spec.body.filter as { calibrated?: unknown; rooms?: { eq: string[] } };
        const fn = window.function ?? 'max';
        const calibrated = filter.calibrated === true || filter.calibrated === 'true';
        const group = spec.body.group_by as { raw?: boolean; order?: string[] } | undefined;
        if (!group) {
          expect(Array.isArray(data)).toBe(true);
          expect((data as unknown[]).length).toBeGreaterThan(0);
          for (const p of data as Array<Record<string, unknown>>) checkPoint(p, fn, calibrated, run.model, store);
          if (spec.body.paginate) expect(res.json).toHaveProperty('page_info');
          return;
        }
        const grouped = data as Record<string, Record<string, unknown>>;
        expect(Object.keys(grouped).length).toBeGreaterThan(0);
        // Without an order, keyed by the ids filtered on (room ids for filter.rooms).
        if (!group.order && filter.rooms)
          for (const key of Object.keys(grouped)) expect(filter.rooms.eq).toContain(key);
        for (const byTime of Object.values(grouped)) {
          for (const cell of Object.values(byTime)) {
            if (group.raw)
              for (const p of cell as Array<Record<string, unknown>>) checkPoint(p, fn, calibrated, run.model, store);
            else
              expect(cell).toEqual(
                expect.objectContaining({
                  sum: expect.any(Number),
                  min: expect.any(Number),
                  max: expect.any(Number),
                  count: expect.any(Number),
                  mean: expect.any(Number),
                  median: expect.any(Number),
                }),
              );
          }
        }
      });

      function checkStats(body: Record<string, unknown>, data: Record<string, Record<string, number | null>>): void {
        expect(Object.keys(data).sort()).toEqual([...(body.items as string[])].sort());
        for (const id of body.items as string[]) {
          for (const m of body.measurements as string[]) expect(data[id]).toHaveProperty(m);
        }
        // Unfiltered presence average: the mean of the stored minutes in [start, stop).
        if (body.filters === undefined) {
          const id = (body.items as string[])[0] as string;
          const minutes = store
            .presenceSeries(id, '1m', Date.parse(body.start as string), Date.parse(body.stop as string))
            .map((s) => s.value);
          const mean = minutes.reduce((a, b) => a + b, 0) / minutes.length;
          expect(data[id]?.occupancy_avg_presence as number).toBeCloseTo(mean, 3);
        }
      }

      it('"start": "-5m" with "every": "60s" answers the last five simulated minutes of the run; 7m stays a 400', async () => {
        const body = {
          window: { every: '60s', function: 'max', timezone: values.tz },
          filter: { measurements: ['room_occupancy'], rooms: { eq: [values.room] }, start: '-5m' },
        };
        const res = await post(run, '/api/v3/reporting', body);
        expect(res.status, res.text).toBe(200);
        const points = (res.json as { data: Array<{ start: string; stop: string; value: number }> }).data;
        expect(points).toHaveLength(5);
        const starts = points.map((p) => Date.parse(p.start));
        expect(starts.slice(1).map((s, i) => s - (starts[i] as number))).toEqual([60_000, 60_000, 60_000, 60_000]);
        // The platform's present is the run's last heartbeat (the run's end, give or take one heartbeat).
        const lastStop = Date.parse(points[4]!.stop);
        expect(Math.abs(lastStop - run.endMs)).toBeLessThanOrEqual(60_000);
        for (const p of points)
          expect(p.value).toBe(
            store.presenceSeries(values.room as string, '1m', Date.parse(p.start), Date.parse(p.stop))[0]?.value,
          );
        const refused = await post(run, '/api/v3/reporting', { ...body, window: { ...body.window, every: '7m' } });
        expect(refused.status).toBe(400);
        expect(refused.text).toMatch(/window\.every/);
      });

      it('traffic_floor_occupancy for the last 5 minutes equals what a query from local midnight gives for the same minutes', async () => {
        const floor = values.floor as string;
        const ask = async (start: string): Promise<Array<{ start: string; value: number }>> => {
          const res = await post(run, '/api/v3/reporting', {
            window: { every: '1m', function: 'max', timezone: values.tz },
            filter: { measurements: ['traffic_floor_occupancy'], spaces: { eq: [floor] }, start },
          });
          expect(res.status, res.text).toBe(200);
          return (res.json as { data: Array<{ start: string; value: number }> }).data;
        };
        const midnight = DateTime.fromMillis(run.model.startMs, { zone: values.tz }).startOf('day').toISO() as string;
        const recent = await ask('-5m');
        const fromMidnight = await ask(midnight);
        expect(recent).toHaveLength(5);
        expect(fromMidnight.slice(-5)).toEqual(recent);
        // People came in through the front door during the run: the values are not all zero.
        expect(recent.some((p) => p.value > 0)).toBe(true);
        for (const p of recent)
          expect(p.value).toBe(naiveTrafficOccupancy(run.model, store, floor, Date.parse(p.start)));
      });

      it('the standard introspection query succeeds on the served run', async () => {
        const res = await gql(getIntrospectionQuery());
        expect(res.json.errors).toBeUndefined();
        expect(res.status).toBe(200);
        const types = (res.json.data as { __schema: { types: Array<{ name: string }> } }).__schema.types.map(
          (t) => t.name,
        );
        expect(types).toEqual(expect.arrayContaining(['Room', 'Zone', 'Floor', 'Sensor', 'Hive']));
      });

      it('sensors on batteries report battery dates from the battery model, in order', async () => {
        const res = await gql(
          'query($ids: [String!]) { sensors(ids: $ids) { data { power_type last_battery_change_date next_battery_change_date battery_change_by_date estimated_total_runtime_days } } }',
          { ids: [values.sensor] },
        );
        const s = (res.json.data as { sensors: { data: Array<Record<string, string | number | null>> } }).sensors
          .data[0]!;
        expect(s.power_type).toBe('battery');
        const last = Date.parse(s.last_battery_change_date as string);
        const next = Date.parse(s.next_battery_change_date as string);
        const by = Date.parse(s.battery_change_by_date as string);
        expect(last).toBeLessThanOrEqual(run.model.startMs + 60_000);
        expect(next).toBeGreaterThan(run.endMs);
        expect(by).toBeGreaterThan(next);
        expect(s.estimated_total_runtime_days as number).toBeGreaterThan(0);
      });
    });
  },
);
