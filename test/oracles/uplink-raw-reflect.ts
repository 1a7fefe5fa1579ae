import type protobuf from 'protobufjs';
import { protoRoot } from '../../src/proto/codec.js';
import type { RawUplinkFields } from '../../src/capture/rules.js';

/**
 * The uplink's raw fields by protobufjs reflection (toObject with defaults and oneofs), as the
 * conformance checker and the recorder read them before #31 item 6: the oracle `rawUplink`
 * (src/capture/rules.ts, over the one uplink decoder) is held to, key order and reasons
 * included (test/capture/rules.test.ts).
 */
const HiveUplinkT = protoRoot.lookupType('occusim.v1.HiveUplink');
const OPTS: protobuf.IConversionOptions = { longs: Number, enums: Number, defaults: true, oneofs: true, arrays: true };

export function rawUplinkReflect(payload: Uint8Array): RawUplinkFields | string {
  try {
    return HiveUplinkT.toObject(HiveUplinkT.decode(payload), OPTS) as RawUplinkFields;
  } catch (err) {
    return `HiveUplink: ${(err as Error).message}`;
  }
}
