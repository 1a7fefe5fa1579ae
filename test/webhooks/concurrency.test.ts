import { describe, expect, it } from 'vitest';
import { scenarioJsonSchema } from '../../src/scenario/schema.js';
import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  MAX_WEBHOOK_CONCURRENCY,
  MIN_WEBHOOK_CONCURRENCY,
  concurrencyProblem,
} from '../../src/webhooks/concurrency.js';

describe('webhook concurrency limit', () => {
  it('accepts integers in 1..64 only', () => {
    expect([1, 16, 64].map(concurrencyProblem)).toEqual([null, null, null]);
    for (const bad of [0, 65, 2.5, Number.NaN, -1])
      expect(concurrencyProblem(bad), String(bad)).toMatch(/^an integer in 1\.\.64, got /);
  });

  it('has the same bounds and default in the scenario file’s schema as in the platform', () => {
    type Field = { description: string; anyOf: Array<{ type: string; minimum?: number; maximum?: number }> };
    const schema = scenarioJsonSchema() as {
      properties: { webhooks: { items: { properties: { concurrency: Field } } } };
    };
    const field = schema.properties.webhooks.items.properties.concurrency;
    const integer = field.anyOf.find((a) => a.type === 'integer');
    expect([integer?.minimum, integer?.maximum]).toEqual([MIN_WEBHOOK_CONCURRENCY, MAX_WEBHOOK_CONCURRENCY]);
    expect(field.description).toContain(`or ${DEFAULT_WEBHOOK_CONCURRENCY}`);
  });
});
