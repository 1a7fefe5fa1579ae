import { z } from 'zod';
import { canonicalEventType, EVENT_TYPES } from '../core/event-types.js';
import { MAC_PATTERN } from '../core/ids.js';
import { isValidZone } from '../core/time.js';
import { SENSOR_MODELS } from './model.js';
import { thermalSchema, warmObjectSchema } from './thermal-schema.js';
import { faultSchema, networkSchema } from './network-schema.js';
import { MAX_EXPECTATIONS, parseExpectation } from './expectations.js';
import { webhookFaultsSchema } from './webhook-faults-schema.js';
import { webhookStormSchema } from './webhook-storm-schema.js';
import { rampSchema } from './ramp.js';

/** Bounds of `webhooks[].concurrency`: webhooks/concurrency.ts's (a test pins that they agree; the scenario layer does not import the platform's). */
const MIN_WEBHOOK_CONCURRENCY = 1;
const MAX_WEBHOOK_CONCURRENCY = 64;
const DEFAULT_WEBHOOK_CONCURRENCY = 16;

/**
 * The scenario file format v1 as zod schemas. The validator parses the expanded tree
 * (templates and repeats applied) with `fileSchema`, and `scenarioJsonSchema()` is generated
 * from the very same objects, so editors complete exactly what the loader accepts.
 */

// Same grammar as parseDuration in core/time.ts, spelled out so the JSON Schema carries it.
const DURATION_PATTERN =
  /^(?:\d+(?:\.\d+)?d)?(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m(?!s))?(?:\d+(?:\.\d+)?s)?(?:\d+ms)?$/;
const CLOCK_PATTERN = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

/** Names may be written as numbers (`name: 101`); they are always strings in the model. */
const name = z
  .union([z.string().min(1), z.number()])
  .transform(String)
  .describe('Name, unique within its parent');
const ref = (what: string) =>
  z
    .union([z.string().min(1), z.number()])
    .transform(String)
    .describe(`Name of a ${what} on the same floor`);
const refs = (what: string) => z.array(ref(what)).min(1);
const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' });
const vec2 = z.tuple([finite, finite]).describe('[x, y] in metres');
/**
 * The shape checks are quadratic in vertices (20,000 took 26 s): 256 draws a curved wall
 * finely enough. The total over a scenario is bounded too (vertex-budget.ts).
 */
export const MAX_POLYGON_VERTICES = 256;
/**
 * Organisations a file may declare (issue 33 item 8): every one is served by one process, its
 * users and clients held in memory and its assets in one catalogue. 1,000 start in seconds
 * (docs/scenario-format.md); a 3,000-organisation file validated in 7 s but never finished
 * starting while secrets were hashed at start.
 */
export const MAX_ORGANISATIONS = 1_000;
const polygon = z
  .array(vec2)
  .min(3)
  .max(MAX_POLYGON_VERTICES, { message: `a polygon has at most ${MAX_POLYGON_VERTICES} vertices` })
  .describe('Vertices [[x, y], ...], implicitly closed');
const duration = z
  .string()
  .regex(DURATION_PATTERN, { message: 'bad duration' })
  .describe('Duration such as 500ms, 90s, 30m, 1h30m, 1d');
const clock = z.string().regex(CLOCK_PATTERN, { message: 'bad clock time' }).describe('Local time of day HH:MM');
const probability = z.number().min(0).max(1);
const capacity = z.strictObject({ max: z.number().int().nonnegative(), mid: z.number().int().nonnegative() });
/** A local date-time; an explicit offset must be a real one (luxon takes `+99:00`). */
const localDateTime = z
  .string()
  .min(1)
  .superRefine((t, ctx) => {
    const problem = offsetProblem(t);
    if (problem !== null)
      ctx.addIssue({ code: 'custom', message: `${problem}: UTC offsets lie within ±14:00, minutes below 60` });
  });
const calibrationPoints = z
  .array(
    z.strictObject({
      timestamp: localDateTime.describe(
        'Local date-time of the site, e.g. 2026-03-02T13:00 (an explicit offset or Z wins)',
      ),
      occupancy: z.number().int().nonnegative(),
    }),
  )
  .describe('Known occupancy at instants: anchors of the calibrated traffic occupancy (docs/occupancy.md)');
const optionalId = z.union([z.string(), z.number()]).transform(String).optional();

const repeatSpec = z
  .union([
    z.number().int().nonnegative(),
    z.strictObject({
      count: z.number().int().nonnegative(),
      as: z
        .string()
        .regex(/^[A-Za-z_]\w*$/)
        .optional()
        .describe('Variable name (default i)'),
      offset: vec2.optional().describe('Shift of copy k: k × offset'),
    }),
  ])
  .describe('Emit this item N times; ${i} in strings is the 0-based copy index');

/** Fields every list item may carry; the expander removes them before validation. */
const itemFields = {
  use: z.string().optional().describe('Name of a template whose fields this item starts from'),
  repeat: repeatSpec.optional(),
};

export const sensorModelNames = Object.keys(SENSOR_MODELS) as [
  keyof typeof SENSOR_MODELS,
  ...(keyof typeof SENSOR_MODELS)[],
];

const sensorTuning = {
  model: z.enum(sensorModelNames).optional(),
  height: z.number().positive().max(10).optional().describe('Mounting height, metres (supported 2.4–4.6)'),
  orientation: finite.optional().describe('Yaw, degrees counter-clockwise from the x axis'),
  field_of_view: z.number().gt(0).lt(180).optional().describe('Degrees'),
  sensitivity: z.number().int().min(1).max(5).optional(),
  report_interval: duration.optional(),
  fps: z
    .number()
    .positive()
    .max(60)
    .optional()
    .describe('Frames per second at frame fidelity (default 3 presence, 8 traffic)'),
};

export const roomSchema = z.strictObject({
  ...itemFields,
  name,
  polygon,
  capacity: capacity.optional(),
  custom_id: optionalId,
  calibration_points: calibrationPoints.optional(),
});
export const zoneSchema = z.strictObject({
  ...itemFields,
  name,
  room: ref('room').optional(),
  polygon,
  custom_id: optionalId,
});
export const doorSchema = z.strictObject({
  ...itemFields,
  name,
  line: z.tuple([vec2, vec2]).describe('[[x1, y1], [x2, y2]] on the rooms\u2019 shared wall'),
  between: z
    .tuple([ref('room'), ref('room')])
    .optional()
    .describe('[A, B]: walking from A into B is "in"'),
  entrance: ref('room').optional().describe('Entrance from outside the floor into this room'),
});
export const hiveSchema = z.strictObject({
  ...itemFields,
  name,
  position: vec2,
  room: ref('room').optional(),
  backhaul: z.enum(['wifi', 'cellular', 'ethernet']).optional(),
  firmware: z.string().optional(),
  serial: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a serial is 1 to 64 of A-Z a-z 0-9 _ -')
    .optional()
    .describe('The real hive\u2019s serial (MQTT username and topic level); default derived from the names'),
  password: z
    .string()
    .min(8)
    .max(256)
    .optional()
    .describe('The real hive\u2019s MQTT password; default derived from the seed and the serial'),
});
export const sensorSchema = z.strictObject({
  ...itemFields,
  name,
  mode: z.enum(['presence', 'traffic']),
  room: ref('room').optional(),
  zone: ref('zone').optional(),
  door: ref('door').optional(),
  hive: ref('hive').optional(),
  in: ref('room').optional().describe('Traffic: the room a crossing counts "in" towards'),
  mac: z
    .string()
    .regex(MAC_PATTERN, 'a MAC is 8 lower-case hex bytes joined by -, e.g. 00-17-0d-00-00-00-00-01')
    .optional()
    .describe('The real sensor\u2019s MAC (docs/firmware.md); default derived from the names'),
  center: vec2,
  ...sensorTuning,
  grid: z
    .strictObject({ count: z.tuple([z.number().int().positive(), z.number().int().positive()]), step: vec2 })
    .optional()
    .describe('Expand into nx × ny sensors starting at center'),
});
const timeDist = z.strictObject({ mean: clock, sd: duration.optional() });
const activity = z.strictObject({ to: refs('room'), every: duration, dwell: duration });
export const peopleSchema = z.strictObject({
  ...itemFields,
  name,
  count: z.number().int().nonnegative(),
  desks: refs('room'),
  entrance: z
    .union([ref('door'), refs('door')])
    .optional()
    .describe('Entrance door(s); default all entrances of the floor'),
  arrival: timeDist,
  departure: timeDist,
  activities: z.array(activity).optional(),
});
export const meetingSchema = z.strictObject({
  ...itemFields,
  name,
  room: ref('room'),
  at: clock,
  duration,
  attendees: z.number().int().positive(),
});
export const floorSchema = z.strictObject({
  ...itemFields,
  name,
  level: z.number().int(),
  custom_id: optionalId,
  outline: polygon.optional().describe('Default: bounding box of the rooms'),
  calibration_points: calibrationPoints.optional(),
  rooms: z.array(roomSchema).min(1),
  zones: z.array(zoneSchema).optional(),
  doors: z.array(doorSchema).optional(),
  hives: z.array(hiveSchema).optional(),
  sensors: z.array(sensorSchema).optional(),
  people: z.array(peopleSchema).optional(),
  meetings: z.array(meetingSchema).optional(),
  warm_objects: z.array(warmObjectSchema).optional().describe('Static warm objects seen by frame-fidelity sensors'),
});
export const buildingSchema = z.strictObject({
  ...itemFields,
  name,
  custom_id: optionalId,
  building_number: optionalId,
  capacity: capacity.optional(),
  address: z.strictObject({ lines: z.array(z.string()), country: z.string().optional() }).optional(),
  floors: z.array(floorSchema).min(1),
});
export const siteSchema = z.strictObject({
  ...itemFields,
  name,
  timezone: z
    .string()
    .refine(isValidZone, { message: 'unknown IANA time zone' })
    .superRefine((zone, ctx) => {
      // Luxon accepts any case; the zone is then stored and printed as written, and other tools are not so kind.
      const canonical = canonicalZone(zone);
      if (canonical !== null && canonical !== zone)
        ctx.addIssue({ code: 'custom', message: `time zone names are case-sensitive: \`${canonical}\`` });
    })
    .describe('IANA zone, e.g. Europe/Paris'),
  custom_id: optionalId,
  site_number: optionalId,
  buildings: z.array(buildingSchema).min(1),
});

const noise = z.strictObject({
  presence: z
    .strictObject({
      miss: probability.optional(),
      false_positive: z.number().nonnegative().optional(),
      jitter_m: z.number().nonnegative().optional(),
    })
    .optional(),
  traffic: z.strictObject({ miss: probability.optional(), crowd_miss: probability.optional() }).optional(),
});

const organizationFields = {
  name,
  users: z
    .array(z.strictObject({ ...itemFields, username: z.string().min(1), password: z.string().min(1).optional() }))
    .optional(),
  clients: z
    .array(
      z.strictObject({ ...itemFields, name, description: z.string().optional(), secret: z.string().min(1).optional() }),
    )
    .optional(),
};
export const organizationSchema = z.strictObject(organizationFields);
/**
 * One entry of `organizations:` (a file of several tenants): an organisation with its own
 * sites. A file holds either `organization:` and `sites:`, or `organizations:`.
 */
export const organizationEntrySchema = z.strictObject({
  ...itemFields,
  ...organizationFields,
  sites: z.array(siteSchema).min(1),
});

/** One threshold, e.g. `rooms.mae < 0.5` (grammar and metric names: expectations.ts). */
const expectation = z
  .string()
  .superRefine((text, ctx) => {
    const r = parseExpectation(text);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  })
  .describe('METRIC OP VALUE: rooms.mae<0.5, traffic.recall>=0.9, latency.p99<15s, messages.lost==0');

export const fileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Ignored; lets editors find this schema'),
    version: z.literal(1),
    name,
    description: z.string().optional(),
    seed: z.number().int().nonnegative().optional().describe('Default 1'),
    start: localDateTime.describe('Local time of the first site, e.g. 2026-03-02T08:00 (an explicit offset or Z wins)'),
    duration,
    fidelity: z.enum(['model', 'frame']).optional(),
    tick: duration.optional().describe('Default 1s'),
    batch_interval: duration.optional().describe('Default 10s'),
    noise: noise.optional(),
    thermal: thermalSchema.optional(),
    sensor_defaults: z
      .strictObject({ ...sensorTuning, traffic_report_interval: duration.optional().describe('Default 10s') })
      .optional(),
    organization: organizationSchema.optional().describe('The organisation (required unless `organizations` is given)'),
    organizations: z
      .array(organizationEntrySchema)
      .min(1)
      .max(MAX_ORGANISATIONS, { message: `a file declares at most ${MAX_ORGANISATIONS} organizations` })
      .optional()
      .describe('Several organisations, each with users, clients and sites (instead of `organization` and `sites`)'),
    templates: z
      .record(z.string(), z.record(z.string(), z.unknown()))
      .optional()
      .describe('Named item bodies for `use:`'),
    network: networkSchema.optional(),
    faults: z.array(faultSchema).optional().describe('Fault timeline'),
    ramp: rampSchema.optional(),
    webhooks: z
      .array(
        z.strictObject({
          name: z.string().min(1).optional().describe('Default: webhook-<n>'),
          url: z.string().min(1),
          event_types: z
            .array(
              z
                .string()
                .refine(
                  (t) => canonicalEventType(t) !== null,
                  `an event type of spec §6: ${EVENT_TYPES.join(', ')} (_1MIN is accepted for _1M)`,
                ),
            )
            .min(1),
          filters: z
            .partialRecord(
              z.enum(['org_ids', 'site_ids', 'building_ids', 'floor_ids', 'room_ids', 'zone_ids', 'mac_addresses']),
              z.array(z.string()),
            )
            .optional(),
          secret: z
            .string()
            .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'whsec_ followed by base64')
            .optional()
            .describe('Default: derived from the seed'),
          send_on_value_change: z.boolean().optional(),
          http_timeout: z.number().positive().max(60).optional().describe('Seconds per attempt, default 10'),
          concurrency: z
            .number()
            .int()
            .min(MIN_WEBHOOK_CONCURRENCY)
            .max(MAX_WEBHOOK_CONCURRENCY)
            .optional()
            .describe(
              `Requests in flight to the endpoint (${MIN_WEBHOOK_CONCURRENCY}..${MAX_WEBHOOK_CONCURRENCY}, pipelined on one keep-alive connection); default --webhook-concurrency or ${DEFAULT_WEBHOOK_CONCURRENCY}`,
            ),
          faults: webhookFaultsSchema.optional(),
          storm: webhookStormSchema.optional(),
        }),
      )
      .optional()
      .describe('Webhook subscriptions of the organisation (docs/webhooks.md)'),
    webhook_allow: z
      .array(z.string().min(1))
      .optional()
      .describe('CIDR blocks webhooks may reach although loopback or private, e.g. 127.0.0.1/8'),
    expect: z
      .array(expectation)
      .max(MAX_EXPECTATIONS)
      .optional()
      .describe('Thresholds checked when a run ends (exit 1 when one fails), e.g. rooms.mae<0.5, latency.p99<15s'),
    sites: z
      .array(siteSchema)
      .min(1)
      .optional()
      .describe('Sites of `organization` (required unless `organizations` is given)'),
  })
  .describe('occusim scenario file, format version 1');

export type ScenarioFile = z.output<typeof fileSchema>;
export type SensorFile = z.output<typeof sensorSchema>;
export type PeopleFile = z.output<typeof peopleSchema>;

/**
 * The JSON Schema (draft 2020-12) of scenario files, generated from `fileSchema`, for the file
 * as written: required fields of an item are conditional on the item having no `use:` (a
 * template supplies them), and a number may be written as a `${…}` expression of a repeated
 * item (`level: "${k+1}"`, substitute.ts), which becomes the number before validation.
 */
export function scenarioJsonSchema(): object {
  const schema = z.toJSONSchema(fileSchema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const js = ctx.jsonSchema as Record<string, unknown> & {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      if (js.properties?.['use'] !== undefined && js.required !== undefined) {
        js['if'] = { not: { required: ['use'] } };
        js['then'] = { required: js.required };
        delete js.required;
      }
      if (js['type'] === 'number' || js['type'] === 'integer') {
        const number = { ...js };
        for (const k of Object.keys(js)) delete js[k];
        js['anyOf'] = [number, EXPRESSION_SCHEMA];
      }
    },
  }) as Record<string, unknown>;
  // One organisation with the file's sites, or several each with its own: never both.
  return { ...schema, oneOf: [{ required: ['organization', 'sites'] }, { required: ['organizations'] }] };
}

/** A `${…}` substitution written where a number goes (checked after expansion). */
const EXPRESSION_SCHEMA = {
  type: 'string',
  pattern: '^\\$\\{[^}]*\\}$',
  description: 'An expression of a repeated item, e.g. ${i+1}',
};

/** The keys an object at `path` of the file accepts (for "did you mean"), or [] when unknown. */
export function keysAt(path: readonly (string | number)[]): string[] {
  let s: unknown = fileSchema;
  for (const seg of [...path, null]) {
    s = unwrap(s);
    const def = (s as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
    if (def === undefined) return [];
    if (seg === null) return def['type'] === 'object' ? Object.keys(def['shape'] as object) : [];
    if (def['type'] === 'object') s = (def['shape'] as Record<string, unknown>)[String(seg)];
    else if (def['type'] === 'array') s = def['element'];
    else if (def['type'] === 'record') s = def['valueType'];
    else return [];
  }
  return [];
}

function unwrap(s: unknown): unknown {
  for (;;) {
    const def = (s as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
    if (def === undefined) return s;
    if (def['type'] === 'optional' || def['type'] === 'default' || def['type'] === 'nullable') s = def['innerType'];
    else if (def['type'] === 'pipe') s = def['in'];
    else return s;
  }
}

/** The zone's spelling as the time-zone database has it, when it differs only by case; null when unknown. */
function canonicalZone(zone: string): string | null {
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
  } catch {
    return null;
  }
}

/** Why the explicit offset of a date-time text is impossible (luxon takes `+99:00`), or null. */
export function offsetProblem(text: string): string | null {
  const m = /([+-])(\d{2}):?(\d{2})$/.exec(text.trim());
  if (!m || !/T/.test(text)) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  return Number(m[3]) >= 60 || minutes > 14 * 60 ? `offset ${m[1]}${m[2]}:${m[3]}` : null;
}
