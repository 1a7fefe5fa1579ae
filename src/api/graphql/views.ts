import type { Sensor } from '../../assets/model.js';
import type { GqlContext } from './context.js';

/**
 * A sensor as GraphQL reads it: the registry record plus its renamed and looked-up scalar
 * fields as plain properties. graphql-jit reads a plain property inline, but calls a field
 * resolver with a fresh resolve-info object (~1.7 µs each): over the fleet's 30,300 sensors,
 * `mac_address` and `hive_serial` as resolvers cost ~50 ms apiece (bench/README.md, "api").
 * Every resolver that returns sensors returns views; built per request, so never stale.
 */
export class SensorView implements Sensor {
  // The registry record, field by field (a spread plus extra keys is ~20× slower in V8;
  // `implements` makes a new required Sensor field a compile error here). `declare`:
  // assigned in the constructor only, no define-semantics field initialisers.
  declare id: string;
  declare name: string;
  declare mac: string;
  declare floorId: string;
  declare roomId: string | null;
  declare zoneId: string | null;
  declare doorId: string | null;
  declare hiveId: string;
  declare mode: Sensor['mode'];
  declare model: Sensor['model'];
  declare center: Sensor['center'];
  declare height: number;
  declare orientationDeg: number;
  declare fovDeg: number;
  declare sensitivity: number;
  declare reportIntervalMs: number;
  declare fps?: number;
  // GraphQL's names.
  declare sensor_id: string;
  declare client_id: string;
  declare mac_address: string;
  declare floor_id: string;
  declare floorID: string;
  declare room_id: string | null;
  declare roomID: string | null;
  declare hive_id: string;
  declare hive_serial: string;
  declare orientation: number;
  declare field_of_view: number;
  declare effective_field_of_view: number;
  declare in_direction: string | null;

  constructor(s: Sensor, orgId: string, hiveSerial: string) {
    this.id = s.id;
    this.name = s.name;
    this.mac = s.mac;
    this.floorId = s.floorId;
    this.roomId = s.roomId;
    this.zoneId = s.zoneId;
    this.doorId = s.doorId;
    this.hiveId = s.hiveId;
    this.mode = s.mode;
    this.model = s.model;
    this.center = s.center;
    this.height = s.height;
    this.orientationDeg = s.orientationDeg;
    this.fovDeg = s.fovDeg;
    this.sensitivity = s.sensitivity;
    this.reportIntervalMs = s.reportIntervalMs;
    if (s.fps !== undefined) this.fps = s.fps;
    this.sensor_id = s.id;
    this.client_id = orgId;
    this.mac_address = s.mac;
    this.floor_id = s.floorId;
    this.floorID = s.floorId;
    this.room_id = s.roomId;
    this.roomID = s.roomId;
    this.hive_id = s.hiveId;
    this.hive_serial = hiveSerial;
    this.orientation = s.orientationDeg;
    this.field_of_view = s.fovDeg;
    this.effective_field_of_view = s.fovDeg;
    this.in_direction = s.mode === 'traffic' ? s.roomId : null;
  }
}

export function sensorViews(ctx: GqlContext, sensors: readonly Sensor[]): SensorView[] {
  // A floor's sensors share a few hives: look each serial up once per list.
  const serials = new Map<string, string>();
  const orgId = ctx.principal.orgId;
  return sensors.map((s) => {
    let serial = serials.get(s.hiveId);
    if (serial === undefined) serials.set(s.hiveId, (serial = ctx.assets.get('hive', orgId, s.hiveId)?.serial ?? ''));
    return new SensorView(s, orgId, serial);
  });
}
