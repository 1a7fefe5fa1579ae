import type { AedesOptions, AuthenticateError, Client, ConnectPacket, PublishPacket, Subscription } from 'aedes';
import { effectiveSubscription, isSystemTopic, mayPublish } from './acl.js';
import type { CredentialTable, Principal } from './credentials.js';
import { parseHiveTopic } from '../core/topics.js';
import { MAX_HEARTBEAT_BYTES } from '../proto/limits.js';

/**
 * The embedded broker's policy as Aedes hooks: one small function per rule, each citing the
 * MQTT 3.1.1 clause it implements. Aedes 1.x speaks MQTT 3.1/3.1.1 only (an MQTT 5 CONNECT
 * gets CONNACK 0x01 from Aedes itself), so refusals use CONNACK return codes, SUBACK 0x80,
 * or closing the connection.
 */

/** Counters the hooks bump; read by `EmbeddedBroker.stats()`. */
export interface PolicyCounters {
  connections: number;
  refusedAuth: number;
  refusedAcl: number;
}

export interface HookOptions {
  credentials: CredentialTable;
  maxPayloadBytes: number;
  counters: PolicyCounters;
}

type PolicyHooks = Required<
  Pick<AedesOptions, 'preConnect' | 'authenticate' | 'authorizePublish' | 'authorizeSubscribe'>
>;

// CONNACK return codes (MQTT 3.1.1 §3.2.2.3). Aedes types them as an ambient const enum,
// which isolatedModules cannot read, hence the literals.
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

function payloadBytes(packet: PublishPacket): number {
  const { payload } = packet;
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

/** Builds the hooks; principals live in a WeakMap so nothing outlives its connection. */
export function policyHooks(opts: HookOptions): PolicyHooks {
  const principals = new WeakMap<Client, Principal>();
  const unnamedPersistent = new WeakSet<Client>();
  const unnamed = new WeakSet<Client>();
  const { counters } = opts;

  // Aedes replaces an empty client id before `authenticate` runs, so the raw CONNECT is
  // inspected here and the verdict delivered with the other CONNACK refusals below.
  const preConnect: PolicyHooks['preConnect'] = (client, packet: ConnectPacket, callback) => {
    if (packet.clientId.length === 0) (packet.clean === false ? unnamedPersistent : unnamed).add(client);
    callback(null, true);
  };

  const authenticate: PolicyHooks['authenticate'] = (client, username, password, done) => {
    if (unnamedPersistent.has(client)) {
      counters.refusedAuth++;
      // [MQTT-3.1.3-8] zero-byte ClientId with CleanSession=0: CONNACK 0x02, then close.
      done(authError(IDENTIFIER_REJECTED, 'identifier rejected: empty client id needs clean session'), false);
      return;
    }
    const principal = opts.credentials.verify(username, password);
    if (principal === null) {
      counters.refusedAuth++;
      // [MQTT-3.2.2-5] a non-zero CONNACK return code is followed by closing the connection.
      done(authError(BAD_USERNAME_OR_PASSWORD, 'bad user name or password'), false);
      return;
    }
    const idRefusal = clientIdRefusal(principal, client.id, unnamed.has(client));
    if (idRefusal !== null) {
      counters.refusedAuth++;
      // Refused here, before Aedes registers the client: registering a client id already
      // connected closes the older connection ([MQTT-3.1.4-2]), so a login allowed any id could
      // disconnect another hive (or the cloud) at will.
      done(authError(IDENTIFIER_REJECTED, idRefusal), false);
      return;
    }
    principals.set(client, principal);
    counters.connections++;
    done(null, true);
  };

  const authorizePublish: PolicyHooks['authorizePublish'] = (client, packet, callback) => {
    const refusal = publishRefusal(
      client === null ? null : (principals.get(client) ?? 'unknown'),
      packet,
      opts.maxPayloadBytes,
    );
    if (refusal === null) return callback(null);
    counters.refusedAcl++;
    // [MQTT-3.3.5-2] MQTT 3.1.1 cannot tell the client why: the server closes the connection.
    callback(new Error(refusal));
  };

  const authorizeSubscribe: PolicyHooks['authorizeSubscribe'] = (client, sub: Subscription, callback) => {
    const principal = principals.get(client);
    const topic = principal === undefined ? null : effectiveSubscription(principal, sub.topic);
    if (topic === null) {
      counters.refusedAcl++;
      // [MQTT-3.8.4-5] one return code per filter: a refused one gets 0x80 (§3.9.3), the rest apply.
      return callback(null, null);
    }
    callback(null, topic === sub.topic ? sub : { ...sub, topic });
  };

  return { preConnect, authenticate, authorizePublish, authorizeSubscribe };
}

/** The client id prefix reserved for hives: `hive-{serial}` belongs to the hive of that serial alone. */
export const HIVE_CLIENT_ID_PREFIX = 'hive-';

/**
 * Why a login may not use this client id, or null. A hive's login fixes its client id
 * (`hive-{serial}`, or an empty one the broker names itself); no other login may take an id
 * of that shape. So no login can take over another's connection or session.
 */
export function clientIdRefusal(who: Principal, clientId: string, assignedByBroker: boolean): string | null {
  if (who.role === 'hive') {
    if (assignedByBroker || clientId === `${HIVE_CLIENT_ID_PREFIX}${who.serial}`) return null;
    return `identifier rejected: hive ${who.serial} must connect with client id ${HIVE_CLIENT_ID_PREFIX}${who.serial}`;
  }
  if (!assignedByBroker && clientId.startsWith(HIVE_CLIENT_ID_PREFIX))
    return `identifier rejected: client ids ${HIVE_CLIENT_ID_PREFIX}… are reserved for hives`;
  return null;
}

/**
 * Why a publish is refused, or null when it may go. `null` principal = published by the
 * broker itself (e.g. a will being cleared), which only the $SYS rule applies to.
 */
function publishRefusal(
  who: Principal | 'unknown' | null,
  packet: PublishPacket,
  maxPayloadBytes: number,
): string | null {
  if (isSystemTopic(packet.topic)) return `publish to reserved topic ${packet.topic}`;
  if (who === null) return null;
  if (who === 'unknown') return 'publish from an unauthenticated client';
  // [MQTT-2.3.1-1] a QoS 1/2 PUBLISH carries a non-zero packet identifier.
  if (packet.qos > 0 && packet.messageId === 0) return 'QoS > 0 publish with packet identifier 0';
  // Nothing in the protocol is retained: a retained uplink would be replayed to every new
  // subscriber (a restarted ingest would see an old batch as new).
  if (packet.retain) return `retained publish to ${packet.topic}: the protocol retains nothing`;
  const size = payloadBytes(packet);
  if (size > maxPayloadBytes) return `payload of ${size} bytes exceeds the ${maxPayloadBytes}-byte limit`;
  if (size > MAX_HEARTBEAT_BYTES && parseHiveTopic(packet.topic)?.kind === 'heartbeat')
    return `heartbeat of ${size} bytes exceeds the ${MAX_HEARTBEAT_BYTES}-byte limit`;
  if (!mayPublish(who, packet.topic)) return `not authorised to publish to ${packet.topic}`;
  return null;
}
