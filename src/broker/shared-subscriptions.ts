import type { Aedes, Client, PublishPacket, Subscription } from 'aedes';

/**
 * MQTT 5 shared subscriptions (§4.8.2, `$share/<group>/<filter>`) for the embedded broker,
 * as a documented extension: Aedes 1.x implements none (moscajs/aedes#228; the draft
 * moscajs/aedes#449 was never merged), so a plain 3.1.1 client subscribing to
 * `$share/g/F` would get nothing, or — when granted as F — every message in every member.
 *
 * Here the `$share/g/F` filter is granted literally (no client can publish to a `$` topic,
 * so Aedes itself never matches it) and this dispatcher delivers each client PUBLISH whose
 * topic matches F to ONE member of each group holding F, round-robin in subscription order,
 * with the original topic (as MQTT 5 brokers do) at min(publish QoS, granted QoS). Delivery
 * uses the Aedes client's own `deliverQoS` (QoS 1 retries and packet ids as for plain
 * subscriptions). A member that disconnects loses its in-flight messages to the group (no
 * re-dispatch); occusim hives retransmit every batch until the cloud acks it end to end.
 */
const SHARE_RE = /^\$share\/([^/+#]+)\/(.+)$/;

interface Member {
  client: Client;
  qos: number;
}

interface Group {
  filter: string;
  levels: readonly string[];
  members: Member[];
  next: number;
}

/** Whether an MQTT topic matches a filter with `+` and `#` (MQTT 3.1.1 §4.7). */
export function topicMatches(levels: readonly string[], topic: string): boolean {
  const parts = topic.split('/');
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i] as string;
    if (l === '#') return true;
    if (i >= parts.length) return false;
    if (l !== '+' && l !== parts[i]) return false;
  }
  return levels.length === parts.length;
}

export class SharedSubscriptions {
  /** By `$share/<group>/<filter>`, in first-subscription order. */
  readonly #groups = new Map<string, Group>();

  /** Serves every `$share/…` subscription of this broker from now on. */
  attach(aedes: Aedes): void {
    aedes.on('subscribe', (subs: Subscription[], client: Client) => this.subscribe(client, subs));
    aedes.on('unsubscribe', (topics: string[], client: Client) => this.unsubscribe(client, topics));
    aedes.on('clientDisconnect', (client: Client) => this.drop(client));
    aedes.on('publish', (packet: PublishPacket, client: Client | null) => {
      if (client !== null) this.dispatch(packet);
    });
  }

  subscribe(client: Client, subs: readonly Subscription[]): void {
    for (const s of subs) {
      const m = SHARE_RE.exec(s.topic);
      if (!m) continue;
      let g = this.#groups.get(s.topic);
      if (!g)
        this.#groups.set(
          s.topic,
          (g = { filter: m[2] as string, levels: (m[2] as string).split('/'), members: [], next: 0 }),
        );
      const existing = g.members.find((x) => x.client === client);
      if (existing) existing.qos = s.qos;
      else g.members.push({ client, qos: s.qos });
    }
  }

  unsubscribe(client: Client, topics: readonly string[]): void {
    for (const t of topics) {
      const g = this.#groups.get(t);
      if (g) this.#remove(t, g, client);
    }
  }

  drop(client: Client): void {
    for (const [key, g] of this.#groups) this.#remove(key, g, client);
  }

  /** Members per shared subscription (for tests and diagnostics). */
  members(share: string): number {
    return this.#groups.get(share)?.members.length ?? 0;
  }

  dispatch(packet: PublishPacket): void {
    for (const g of this.#groups.values()) {
      if (g.members.length === 0 || !topicMatches(g.levels, packet.topic)) continue;
      const member = g.members[g.next % g.members.length] as Member;
      g.next = (g.next + 1) % g.members.length;
      const copy = { ...packet, qos: Math.min(packet.qos, member.qos) as 0 | 1 | 2, retain: false };
      deliver(member.client, copy);
    }
  }

  #remove(key: string, g: Group, client: Client): void {
    const i = g.members.findIndex((x) => x.client === client);
    if (i < 0) return;
    g.members.splice(i, 1);
    if (g.next > i) g.next--;
    if (g.members.length === 0) this.#groups.delete(key);
  }
}

/** Aedes' per-client delivery (not in its typings: an instance method of every Client). */
function deliver(client: Client, packet: PublishPacket): void {
  const c = client as unknown as { deliverQoS(p: PublishPacket, cb: (err?: Error) => void): void };
  c.deliverQoS(packet, () => {});
}
