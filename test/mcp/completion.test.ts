import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VALUES } from '../../src/mcp/completion.js';
import { connectInMemory, type Session } from './connect.js';
import { envOf } from './org.js';
import { twoOrganisations } from './served.js';

/**
 * `completion/complete` (issue 28, item 3): prompt arguments and template ids, ranked by the
 * search tool's fuzzy score, bounded, and drawn from the caller's organisation only (the
 * other organisation on the same API has rooms of the same names).
 */
let platform: Awaited<ReturnType<typeof twoOrganisations>>;
let session: Session;

beforeAll(async () => {
  platform = await twoOrganisations();
  session = await connectInMemory(envOf(platform.own, platform.api));
}, 60_000);

afterAll(async () => {
  await session?.close();
  await platform?.close();
});

const complete = (
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
  name: string,
  value: string,
) => session.client.complete({ ref, argument: { name, value } }).then((r) => r.completion);

describe('completion', () => {
  it('ranks names by fuzzy match, typos included, for a prompt argument', async () => {
    expect(await complete({ type: 'ref/prompt', name: 'explain_device_health' }, 'device', 'kitchn')).toEqual({
      values: ['Kitchen'],
      total: 1,
      hasMore: false,
    });
    const office = await complete({ type: 'ref/prompt', name: 'building_occupancy_summary' }, 'building', 'mai');
    expect(office.values).toEqual(['Main']);
  });

  it("gives ids for a template variable, only the organisation's own", async () => {
    const own = new Set(platform.own.rooms.map((r) => r.id));
    const other = new Set(platform.other.rooms.map((r) => r.id));
    const got = await complete({ type: 'ref/resource', uri: 'occusim://rooms/{id}' }, 'id', '');
    expect(got.values.length).toBe(own.size);
    for (const v of got.values) expect([v, own.has(v), other.has(v)]).toEqual([v, true, false]);
    const meeting = platform.own.rooms.find((r) => r.name === 'Meeting room')?.id as string;
    expect(
      (await complete({ type: 'ref/resource', uri: 'occusim://rooms/{id}/occupancy' }, 'id', 'meeting')).values[0],
    ).toBe(meeting);
  });

  it(`returns at most ${MAX_VALUES} values, with the total and hasMore`, async () => {
    const got = await complete({ type: 'ref/resource', uri: 'occusim://sensors/{id}' }, 'id', '');
    const sensors = platform.own.sensors.length;
    expect(got.values.length).toBe(Math.min(sensors, MAX_VALUES));
    expect(got.total).toBe(sensors);
    expect(got.hasMore).toBe(sensors > MAX_VALUES);
  });

  it('offers fixed values by prefix, nothing for an unknown reference, and -32602 for malformed params', async () => {
    expect(
      (await complete({ type: 'ref/prompt', name: 'building_occupancy_summary' }, 'period', 'last')).values,
    ).toEqual(['last_7_days', 'last_30_days']);
    expect(await complete({ type: 'ref/prompt', name: 'no_such_prompt' }, 'x', 'a')).toEqual({
      values: [],
      total: 0,
      hasMore: false,
    });
    await expect(
      session.client.request(
        {
          method: 'completion/complete',
          params: { ref: { type: 'ref/prompt' }, argument: { name: 'x', value: 'y'.repeat(5000) } },
        } as never,
        (await import('@modelcontextprotocol/sdk/types.js')).CompleteResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
