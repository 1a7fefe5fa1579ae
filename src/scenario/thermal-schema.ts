import { z } from 'zod';

/**
 * Scenario-file schemas of the thermal environment (frame fidelity): the `thermal:` header
 * and a floor's `warm_objects:`. Apart from schema.ts so resolve-thermal.ts can use them
 * without an import cycle.
 */
const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' });
const vec2 = z.tuple([finite, finite]);

export const thermalSchema = z
  .strictObject({
    ambient: z.number().min(-10).max(45).optional().describe('Room air, °C (default 22)'),
    hvac: z
      .strictObject({ amplitude: z.number().min(0).max(10).optional(), period: z.string().optional() })
      .optional()
      .describe('Ambient swing ± amplitude K over period (default 0.4 K, 20m)'),
    frame_fleet_max: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Frame fidelity is the default up to this many sensors (default 100)'),
  })
  .describe('Thermal environment seen by frame-fidelity sensors');

export const warmObjectSchema = z.strictObject({
  name: z.union([z.string().min(1), z.number()]).transform(String),
  kind: z.enum(['radiator', 'laptop', 'coffee_machine', 'other']),
  position: vec2.describe('Centre [x, y], metres'),
  size: vec2.describe('[width, depth], metres'),
  temperature: z.number().min(-20).max(100).describe('Surface temperature seen from above, °C'),
});
