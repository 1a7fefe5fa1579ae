import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { scenarioJsonSchema } from '../../src/scenario/schema.js';

/**
 * Editors validate scenario files with the JSON Schema `occusim schema` prints, before any
 * template or `${}` substitution: every shipped scenario must pass a standard validator.
 */
const dir = new URL('../../scenarios/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

describe('the JSON Schema of `occusim schema`', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(scenarioJsonSchema());

  it.each(files)('accepts the shipped %s', (file) => {
    const doc: unknown = parse(readFileSync(new URL(file, dir), 'utf8'));
    const ok = validate(doc);
    expect(ok ? [] : validate.errors?.slice(0, 5)).toEqual([]);
  });

  it('takes the faults on the platform itself (store_restart, ingest_kill) as the loader does', () => {
    const doc = parse(readFileSync(new URL('quickstart.yaml', dir), 'utf8')) as Record<string, unknown>;
    const faults = [
      { kind: 'store_restart', at: '1m', duration: '30s' },
      { kind: 'store_restart', at: '2m' },
      { kind: 'ingest_kill', at: '3m' },
    ];
    expect(validate({ ...doc, faults })).toBe(true);
    expect(validate({ ...doc, faults: [{ kind: 'ingest_crash', at: '3m' }] })).toBe(false);
  });

  it('still refuses what the loader refuses (an unknown field)', () => {
    const doc = parse(readFileSync(new URL('quickstart.yaml', dir), 'utf8')) as Record<string, unknown>;
    expect(validate({ ...doc, colour: 'red' })).toBe(false);
  });
});
