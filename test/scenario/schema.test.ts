import { describe, expect, it } from 'vitest';
import { keysAt, offsetProblem, scenarioJsonSchema } from '../../src/scenario/schema.js';

describe('scenario JSON Schema', () => {
  const schema = scenarioJsonSchema() as Record<string, unknown> & {
    properties: Record<string, unknown>;
    required: string[];
  };

  it('is a draft 2020-12 schema of the top-level fields', () => {
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual(expect.arrayContaining(['version', 'name', 'start', 'duration']));
    // One organisation with the file's sites, or several each with its own.
    expect(schema['oneOf']).toEqual([{ required: ['organization', 'sites'] }, { required: ['organizations'] }]);
    expect(schema['additionalProperties']).toBe(false);
  });

  it('makes an item’s required fields conditional on it having no `use:`', () => {
    const text = JSON.stringify(schema);
    expect(text).toContain('"if":{"not":{"required":["use"]}}');
    expect(text).toContain('"required":["name","polygon"]');
  });

  it('carries the duration pattern the validator checks', () => {
    const duration = schema.properties['duration'] as { pattern?: string };
    expect(new RegExp(duration.pattern ?? '^$').test('1h30m')).toBe(true);
    expect(new RegExp(duration.pattern ?? '^$').test('1 hour')).toBe(false);
  });
});

describe('keysAt', () => {
  it('lists the fields accepted at a path of the file', () => {
    expect(keysAt(['sites', 0, 'buildings', 0, 'floors', 0, 'sensors', 3])).toEqual(
      expect.arrayContaining(['field_of_view', 'grid', 'door', 'in']),
    );
    expect(keysAt(['nowhere'])).toEqual([]);
  });
});

describe('explicit UTC offsets', () => {
  it('are real ones: within ±14:00 with minutes below 60', () => {
    expect(offsetProblem('2026-03-02T08:00+99:00')).toBe('offset +99:00');
    expect(offsetProblem('2026-03-02T08:00-14:30')).toBe('offset -14:30');
    expect(offsetProblem('2026-03-02T08:00+05:75')).toBe('offset +05:75');
    for (const ok of [
      '2026-03-02T08:00',
      '2026-03-02T08:00Z',
      '2026-03-02T08:00+14:00',
      '2026-03-02T08:00-03:30',
      '2026-03-02T08:00:30+0545',
    ])
      expect(offsetProblem(ok)).toBeNull();
  });
});
