import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInMemory, type Session } from './connect.js';
import { envOf } from './org.js';
import { twoOrganisations } from './served.js';

/**
 * Prompts (issue 28, item 2): each resolves its asset by id or name in the caller's
 * organisation and names the tool calls, with ids, that answer the job; a bad argument is
 * -32602 naming it.
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

const text = async (name: string, args: Record<string, string>): Promise<string> => {
  const r = await session.client.getPrompt({ name, arguments: args });
  expect(r.messages).toHaveLength(1);
  return (r.messages[0]?.content as { text: string }).text;
};

describe('prompts', () => {
  it('are listed with their arguments', async () => {
    const { prompts } = await session.client.listPrompts();
    expect(prompts.map((p) => [p.name, p.arguments?.map((a) => `${a.name}${a.required ? '' : '?'}`)])).toEqual([
      ['building_occupancy_summary', ['building', 'period?']],
      ['find_free_room', ['scope?', 'min_capacity?', 'tags?']],
      ['explain_device_health', ['device']],
    ]);
  });

  it('name the tool calls with the ids of the assets given by name or id', async () => {
    const b = platform.own.buildings[0] as { id: string; name: string };
    const byName = await text('building_occupancy_summary', { building: b.name, period: 'last_7_days' });
    expect(byName).toContain(b.id);
    expect(byName).toContain('service_get_occupancy_timeseries');
    for (const f of platform.own.floors) expect(byName).toContain(f.id);
    expect(await text('building_occupancy_summary', { building: b.id, period: 'last_7_days' })).toBe(byName);
    const free = await text('find_free_room', { scope: b.name, min_capacity: '6', tags: 'focus, quiet' });
    expect(free).toContain(
      `service_available_rooms with ${JSON.stringify({ scope_id: b.id, min_capacity: 6, tags: ['focus', 'quiet'] })}`,
    );
    const sensor = platform.own.sensors.find((s) => s.mode === 'traffic') as { id: string; name: string };
    expect(await text('explain_device_health', { device: sensor.name })).toContain(`ids ["${sensor.id}"]`);
  });

  it("refuse a bad argument with -32602 naming it, another organisation's asset included", async () => {
    const other = platform.other.buildings[0]?.id as string;
    const bad: Array<[string, Record<string, string>, RegExp]> = [
      ['building_occupancy_summary', {}, /needs building/],
      ['building_occupancy_summary', { building: other }, /building: .*not in this organisation/],
      [
        'building_occupancy_summary',
        { building: platform.own.buildings[0]?.id as string, period: 'forever' },
        /period: one of/,
      ],
      ['find_free_room', { min_capacity: 'six' }, /min_capacity: a whole number/],
      ['find_free_room', { colour: 'red' }, /has no argument colour/],
      ['no_such_prompt', {}, /unknown prompt/],
    ];
    for (const [name, args, message] of bad)
      await expect(session.client.getPrompt({ name, arguments: args })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(message),
      });
  });
});
