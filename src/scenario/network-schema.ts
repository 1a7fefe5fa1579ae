import { z } from 'zod';

/**
 * File schema of the `network:` and `faults:` sections (docs/scenario-format.md, "Network
 * and faults"). Kept apart from schema.ts, which imports it.
 */
const DURATION_PATTERN =
  /^(?:\d+(?:\.\d+)?d)?(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m(?!s))?(?:\d+(?:\.\d+)?s)?(?:\d+ms)?$/;
const duration = z
  .string()
  .regex(DURATION_PATTERN, { message: 'bad duration' })
  .describe('Duration such as 500ms, 90s, 30m, 1h30m, 1d');
/** A signed duration (`clock_skew`'s offset): `-30s`, `+2m`, `90s`. */
const SIGNED_DURATION_PATTERN =
  /^[+-]?(?:\d+(?:\.\d+)?d)?(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m(?!s))?(?:\d+(?:\.\d+)?s)?(?:\d+ms)?$/;
const name = z.union([z.string().min(1), z.number()]).transform(String);

export const networkSchema = z
  .strictObject({
    mesh: z
      .strictObject({
        tx_power: z.number().min(-30).max(20).optional().describe('dBm, default 0'),
        path_loss_exponent: z.number().min(1.5).max(6).optional().describe('Default 3.0'),
        reference_loss: z.number().min(0).optional().describe('dB at 1 m, default 40'),
        wall_loss: z.number().min(0).optional().describe('dB per wall crossed, default 6'),
        sensitivity: z.number().max(-40).optional().describe('dBm, default -95'),
        slot: duration.optional().describe('TSCH timeslot, default 10ms'),
        slotframe: z.number().int().min(2).max(1000).optional().describe('Slots per slotframe, default 101'),
        retries: z.number().int().min(0).max(15).optional().describe('Per hop and parent, default 7'),
        queue: z.number().int().min(1).optional().describe('Frames per node queue, default 256'),
        battery_mah: z.number().min(0).optional().describe('Battery capacity, default 2600 (0 = wired)'),
        health_interval: duration.optional().describe('Sensor health report period, default 5m'),
      })
      .optional(),
    hive: z
      .strictObject({
        buffer_bytes: z.number().int().min(1024).optional().describe('Store-and-forward limit per hive, default 8 MiB'),
        heartbeat_interval: duration.optional().describe('Default 60s'),
        ack_timeout: duration.optional().describe('Retransmission timeout, default 30s'),
        max_batch: z.number().int().min(1).max(500).optional().describe('Packets per uplink batch, default 500'),
      })
      .optional(),
  })
  .describe('Mesh radio and hive parameters');

export const faultSchema = z
  .strictObject({
    kind: z.enum([
      'sensor_offline',
      'link_degradation',
      'hive_reboot',
      'hive_outage',
      'broker_restart',
      'duplicate_batch',
      'clock_skew',
      'sensor_death',
      'battery_drain',
      'platform_restart',
      'webhook_down',
      'store_restart',
      'ingest_kill',
    ]),
    at: duration.describe('Start, as an offset from the scenario start'),
    duration: duration
      .optional()
      .describe(
        'Length (not for broker_restart, platform_restart, ingest_kill or sensor_death; battery_drain: until the battery is empty; store_restart: how long the store is away, default 5s, at most 5m)',
      ),
    sensors: z
      .array(name)
      .min(1)
      .optional()
      .describe('sensor_offline, link_degradation, sensor_death, battery_drain: sensor names'),
    hive: name
      .optional()
      .describe(
        'link_degradation, sensor_offline, sensor_death, battery_drain: every sensor of this hive; hive_reboot, hive_outage, duplicate_batch, clock_skew: the hive',
      ),
    webhook: name
      .optional()
      .describe('webhook_down: the webhook (subscription) of this name; every subscription when absent'),
    loss: z.number().min(0).max(1).optional().describe('link_degradation: extra frame loss per mesh link, 0..1'),
    offset: z
      .string()
      .regex(SIGNED_DURATION_PATTERN, { message: 'bad offset: a signed duration such as -30s or +2m' })
      .optional()
      .describe("clock_skew: how far the hive's clock is off, e.g. -30s (behind) or +2m (ahead)"),
  })
  .describe('A fault on the timeline');

export type NetworkFile = z.output<typeof networkSchema>;
export type FaultFile = z.output<typeof faultSchema>;
