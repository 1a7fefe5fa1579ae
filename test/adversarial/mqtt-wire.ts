/**
 * MQTT 3.1.1 control packets written byte by byte (§2–§3), so the fuzz can send what no
 * well-behaved client library would: wrong protocol levels, packet id 0, reserved flags,
 * lengths that announce more than follows. Only what the fuzz needs.
 */
export function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0 && out.length < 5);
  return Buffer.from(out);
}

export const utf8 = (s: string | Buffer): Buffer => {
  const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
  const len = Buffer.alloc(2);
  len.writeUInt16BE(Math.min(b.length, 0xffff));
  return Buffer.concat([len, b]);
};

const frame = (firstByte: number, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from([firstByte]), varint(body.length), body]);

export interface ConnectFields {
  clientId: string;
  username?: string;
  password?: string;
  protocolName?: string;
  level?: number;
  clean?: boolean;
  keepAliveS?: number;
  /** Sets the reserved flag bit 0 ([MQTT-3.1.2-3]: the server must disconnect). */
  reservedFlag?: boolean;
}

export function connect(f: ConnectFields): Buffer {
  let flags = f.clean === false ? 0 : 0x02;
  if (f.username !== undefined) flags |= 0x80;
  if (f.password !== undefined) flags |= 0x40;
  if (f.reservedFlag) flags |= 0x01;
  const ka = Buffer.alloc(2);
  ka.writeUInt16BE(f.keepAliveS ?? 30);
  const body = Buffer.concat([
    utf8(f.protocolName ?? 'MQTT'),
    Buffer.from([f.level ?? 4, flags]),
    ka,
    utf8(f.clientId),
    ...(f.username !== undefined ? [utf8(f.username)] : []),
    ...(f.password !== undefined ? [utf8(f.password)] : []),
  ]);
  return frame(0x10, body);
}

export function publish(
  topic: string,
  payload: Buffer,
  o: { qos?: number; packetId?: number; retain?: boolean; dup?: boolean } = {},
): Buffer {
  const qos = o.qos ?? 0;
  const first = 0x30 | (o.dup ? 0x08 : 0) | ((qos & 3) << 1) | (o.retain ? 1 : 0);
  const pid = Buffer.alloc(2);
  pid.writeUInt16BE(o.packetId ?? 1);
  return frame(first, Buffer.concat([utf8(topic), ...(qos > 0 ? [pid] : []), payload]));
}

export function subscribe(packetId: number, filter: string, qos = 1): Buffer {
  const pid = Buffer.alloc(2);
  pid.writeUInt16BE(packetId);
  return frame(0x82, Buffer.concat([pid, utf8(filter), Buffer.from([qos])]));
}

export const PINGREQ = Buffer.from([0xc0, 0x00]);
export const DISCONNECT = Buffer.from([0xe0, 0x00]);

/** A fixed header announcing `length` bytes of a packet of this type, with no body following. */
export const announce = (firstByte: number, length: number): Buffer =>
  Buffer.concat([Buffer.from([firstByte]), varint(length)]);

/** Five continuation bytes: a remaining length no MQTT packet may have ([MQTT-2.2.3]). */
export const MALFORMED_LENGTH = Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f]);
