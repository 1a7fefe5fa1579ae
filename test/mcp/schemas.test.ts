import { describe, expect, it } from 'vitest';
import { capText, TEXT_LIMIT } from '../../src/mcp/render.js';
import { toolList } from '../../src/mcp/server.js';

/**
 * The published tool schemas are an interface: they are snapshotted in the repository
 * (test/mcp/__snapshots__/tools.json), so a changed schema fails here until the snapshot is
 * updated on purpose (`npx vitest run test/mcp/schemas.test.ts -u`).
 */
describe('tool schemas', () => {
  const tools = toolList();

  it('match the snapshot in the repository', async () => {
    await expect(JSON.stringify(tools, null, 2) + '\n').toMatchFileSnapshot('./__snapshots__/tools.json');
  });

  it('are the ten tools of the spec, each read-only, with strict inputs and an output schema', () => {
    expect(tools.map((t) => t.name)).toEqual([
      'service_search_assets',
      'service_get_asset_details',
      'service_hardware_snapshot',
      'service_available_rooms',
      'service_space_busyness',
      'service_traffic_flow',
      'service_list_topology',
      'service_fetch_entity_details',
      'service_get_occupancy_timeseries',
      'service_get_current_occupancy',
    ]);
    for (const t of tools) {
      expect(t.annotations?.readOnlyHint, t.name).toBe(true);
      expect(t.annotations?.destructiveHint, t.name).toBe(false);
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
      expect(t.outputSchema?.type).toBe('object');
    }
  });

  it('bound ids to 1–50 unique and queries to 2–500 characters', () => {
    const ids = (
      tools.find((t) => t.name === 'service_get_current_occupancy')?.inputSchema.properties as Record<
        string,
        Record<string, unknown>
      >
    ).ids;
    expect(ids).toMatchObject({ type: 'array', minItems: 1, maxItems: 50 });
    const query = (
      tools.find((t) => t.name === 'service_search_assets')?.inputSchema.properties as Record<
        string,
        Record<string, unknown>
      >
    ).query;
    expect(query).toMatchObject({ type: 'string', minLength: 2, maxLength: 500 });
  });
});

describe('text results', () => {
  it('are capped at ~25,000 characters with a notice saying how to get the rest', () => {
    const long = Array.from({ length: 2000 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n');
    const out = capText(long);
    expect(out.length).toBeLessThanOrEqual(TEXT_LIMIT + 300);
    expect(out).toMatch(/… truncated: \d+ more characters not shown/);
    expect(capText('short')).toBe('short');
  });
});
