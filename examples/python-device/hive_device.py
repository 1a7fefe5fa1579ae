#!/usr/bin/env python3
"""A hive written from proto/ and docs/firmware.md alone: Python, paho-mqtt and protoc's code.

It plays one hive of a scenario (scenarios/firmware.yaml by default) against any occusim MQTT
listener (`occusim check --listen`, `occusim serve`) or a real platform:

  1. reads the JSON `occusim credentials` prints, and takes the hive named by --serial (or the
     first one): its serial, password, topics and sensors;
  2. connects with MQTT 3.1.1, username = serial, client id hive-{serial}, clean session, and
     subscribes to its ack topic with QoS 1 (docs/protocol.md section 4);
  3. builds its store-and-forward backlog: --minutes of readings ending --end-ago-s seconds
     ago, one batch per --batch-s seconds (presence samples every batch, a traffic count per
     minute), numbered seq 1, 2, 3, ... (protocol.md section 6);
  4. publishes the backlog as HiveUplink messages with QoS 1, at most --window unacknowledged
     at once, keeps each batch until an UplinkAck with acked_seq >= its seq arrives, and sends
     it again, unchanged but for sent_at_ms, when no ack covered it within --ack-timeout-s;
  5. publishes a HiveHeartbeat when it connects, every 60 s while connected, and when its
     buffer is empty; then disconnects and prints one JSON line: what it sent and what it
     expects the platform to compute (occupancy per room and minute, door counts).

--lose SEQ drops the first send of batch SEQ on the floor, as a hive does with the batch in
flight when its uplink fails (protocol.md section 8): only the ack timeout brings it back.

Usage:
  protoc -I ../../proto --python_out=gen occusim/v1/uplink.proto
  PYTHONPATH=gen python3 hive_device.py --broker mqtt://127.0.0.1:1883 --credentials creds.json
"""

import argparse
import json
import sys
import threading
import time
from urllib.parse import urlparse

import paho.mqtt.client as mqtt
from occusim.v1 import uplink_pb2 as pb

PROTOCOL_MINOR = 1  # the proto's current minor (protocol.md section 1)
FIRMWARE_VERSION = "python-device/1.0"
HEARTBEAT_EVERY_S = 60  # protocol.md section 4: at least every 60 s while connected
MAX_PACKETS = 500  # protocol.md section 5


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--broker", required=True, help="mqtt://host:port, as occusim prints it")
    p.add_argument("--credentials", required=True, help="file with the JSON of `occusim credentials`")
    p.add_argument("--serial", help="the hive to play (default: the first)")
    p.add_argument("--minutes", type=int, default=10, help="minutes of readings in the backlog")
    p.add_argument("--end-ago-s", type=float, default=0, help="the backlog ends this long before now")
    p.add_argument("--batch-s", type=int, default=10, help="seconds of readings per batch")
    p.add_argument("--window", type=int, default=8, help="unacknowledged batches in flight at most")
    p.add_argument("--ack-timeout-s", type=float, default=30, help="resend a batch no ack covered after this long")
    p.add_argument("--lose", type=int, action="append", default=[], help="drop the first send of this seq")
    p.add_argument("--deadline-s", type=float, default=120, help="give up (exit 1) after this long")
    return p.parse_args(argv)


def now_ms():
    return int(time.time() * 1000)


# --- The readings: a deterministic bench day, so the platform's answer can be predicted. ---

def people_in(sensor_index, minute_index):
    """How many people a presence sensor sees during a minute: the first two, then 1/0/1..."""
    if sensor_index == 0:
        return 2
    return 1 if minute_index % 2 == 0 else 0


def door_counts(minute_index):
    """(in, out) crossings over one minute of the traffic sensor's door."""
    return (1, 0) if minute_index % 2 == 0 else (0, 1)


def build_backlog(hive, start_ms, minutes, batch_s):
    """The batches the hive holds: a list of HiveUplink (seq from 1) and what they say."""
    presence = [s for s in hive["sensors"] if s["mode"] == "presence"]
    traffic = [s for s in hive["sensors"] if s["mode"] == "traffic"]
    batches, expected = [], {"presence": [], "traffic": []}
    per_minute = 60 // batch_s
    for m in range(minutes):
        minute_ms = start_ms + m * 60_000
        for i, s in enumerate(presence):
            expected["presence"].append({"mac": s["mac"], "minute_ms": minute_ms, "people": people_in(i, m)})
        for s in traffic:
            cin, cout = door_counts(m)
            expected["traffic"].append({"mac": s["mac"], "minute_ms": minute_ms, "in": cin, "out": cout})
        for b in range(per_minute):
            t = minute_ms + (b + 1) * batch_s * 1000 - 1000  # the batch's last sample, inside its minute
            up = pb.HiveUplink(hive_serial=hive["serial"], protocol_minor=PROTOCOL_MINOR)
            for i, s in enumerate(presence):
                pkt = up.packets.add(sensor_mac=s["mac"], sensed_at_ms=t)
                pkt.presence.SetInParent()  # an empty room is a presence reading with no detection
                for k in range(people_in(i, m)):
                    pkt.presence.detections.add(x=0.4 + 0.2 * k, y=0.5)
            if b == per_minute - 1:  # a counter reports once per minute, at the interval's end
                cin, cout = door_counts(m)
                for s in traffic:
                    pkt = up.packets.add(sensor_mac=s["mac"], sensed_at_ms=minute_ms + 60_000 - 1)
                    setattr(pkt.traffic, "in", cin)  # `in` is a Python keyword
                    pkt.traffic.out = cout
                    pkt.traffic.interval_ms = 60_000
            assert len(up.packets) <= MAX_PACKETS
            up.seq = len(batches) + 1
            batches.append(up)
    return batches, expected


class Hive:
    """The MQTT side: one connection, the store-and-forward buffer, acks and heartbeats."""

    def __init__(self, args, hive, batches):
        self.args, self.hive, self.batches = args, hive, batches
        self.topics = hive["publish"]["uplink"], hive["publish"]["heartbeat"], hive["subscribe"]["ack"]
        self.lock = threading.Condition()
        self.acked_seq = 0
        self.sent_at = {}  # seq -> monotonic time of its last send, until an ack covers it
        self.attempted = set()  # seqs sent at least once (lost on the way or not)
        self.to_lose = set(args.lose)
        self.published = self.retransmissions = self.heartbeats = 0
        self.refused = None  # CONNACK return code when the broker refused us
        self.subscribed = False
        self.booted = time.monotonic()
        self.last_heartbeat = None
        try:  # paho-mqtt 2.x asks which callback signatures we use; 1.x (Debian 12) does not
            self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION1, client_id=f"hive-{hive['serial']}", clean_session=True, protocol=mqtt.MQTTv311)
        except AttributeError:
            self.client = mqtt.Client(client_id=f"hive-{hive['serial']}", clean_session=True, protocol=mqtt.MQTTv311)
        self.client.username_pw_set(hive["username"], hive["password"])
        self.client.on_connect = self.on_connect
        self.client.on_subscribe = self.on_subscribe
        self.client.on_message = self.on_message

    # paho callbacks run on its network thread
    def on_connect(self, client, userdata, flags, rc):
        if rc != 0:
            with self.lock:
                self.refused = rc
                self.lock.notify_all()
            return
        client.subscribe(self.topics[2], qos=1)

    def on_subscribe(self, client, userdata, mid, granted_qos):
        with self.lock:
            self.subscribed = granted_qos[0] == 1  # 0x80 = the broker refused the subscription
            self.refused = None if self.subscribed else f"SUBACK {granted_qos[0]}"
            self.lock.notify_all()

    def on_message(self, client, userdata, msg):
        ack = pb.UplinkAck()
        ack.ParseFromString(msg.payload)
        if ack.hive_serial != self.hive["serial"]:
            return
        with self.lock:
            # Acks are cumulative: every seq <= acked_seq is durably stored.
            self.acked_seq = max(self.acked_seq, ack.acked_seq)
            for seq in [s for s in self.sent_at if s <= self.acked_seq]:
                del self.sent_at[seq]
            self.lock.notify_all()

    def heartbeat(self, state):
        unacked = self.batches[self.acked_seq:]
        hb = pb.HiveHeartbeat(
            hive_serial=self.hive["serial"], sent_at_ms=now_ms(), firmware_version=FIRMWARE_VERSION,
            protocol_minor=PROTOCOL_MINOR, state=state, uptime_ms=int((time.monotonic() - self.booted) * 1000),
            net_path_stability=1.0, acked_seq=self.acked_seq, next_seq=len(self.batches) + 1,
            buffered_batches=len(unacked), buffered_bytes=sum(b.ByteSize() for b in unacked), dropped_packets=0)
        for s in self.hive["sensors"]:
            hb.sensors.add(sensor_mac=s["mac"], measured_at_ms=now_ms(), battery_level=0.9, battery_runtime_s=30 * 86_400,
                           rssi_dbm=-60, link_pdr=0.99, uptime_ms=hb.uptime_ms, parent=self.hive["serial"], hops=1)
        self.client.publish(self.topics[1], hb.SerializeToString(), qos=1).wait_for_publish()
        self.heartbeats += 1
        self.last_heartbeat = time.monotonic()

    def send(self, seq):
        batch = self.batches[seq - 1]
        retransmission = seq in self.attempted
        self.attempted.add(seq)
        self.sent_at[seq] = time.monotonic()
        batch.sent_at_ms = now_ms()  # a retransmission repeats seq and packets; only this changes
        if seq in self.to_lose:
            self.to_lose.discard(seq)  # lost on the way: never reaches the broker
            return
        self.client.publish(self.topics[0], batch.SerializeToString(), qos=1)
        self.published += 1
        if retransmission:
            self.retransmissions += 1

    def run(self):
        url = urlparse(self.args.broker)
        self.client.connect(url.hostname, url.port or 1883, keepalive=30)
        self.client.loop_start()
        deadline = time.monotonic() + self.args.deadline_s
        try:
            with self.lock:
                while not self.subscribed:
                    if self.refused is not None:
                        raise ConnectionRefusedError(f"refused: {self.refused}")
                    if time.monotonic() > deadline:
                        raise TimeoutError("no CONNACK and SUBACK before the deadline")
                    self.lock.wait(0.2)
            self.heartbeat(pb.HIVE_STATE_CATCHING_UP)
            next_seq = 1
            while True:
                with self.lock:
                    if self.acked_seq >= len(self.batches):
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"acked_seq {self.acked_seq} of {len(self.batches)}")
                    # Resend what no ack covered in time, oldest first; then fill the window.
                    now = time.monotonic()
                    for seq in sorted(s for s, t in self.sent_at.items() if now - t >= self.args.ack_timeout_s):
                        self.send(seq)
                    while next_seq <= len(self.batches) and next_seq - 1 - self.acked_seq < self.args.window:
                        self.send(next_seq)
                        next_seq += 1
                    self.lock.wait(0.05)
                if time.monotonic() - self.last_heartbeat >= HEARTBEAT_EVERY_S:
                    self.heartbeat(pb.HIVE_STATE_CATCHING_UP)
            self.heartbeat(pb.HIVE_STATE_ONLINE)
        finally:
            self.client.disconnect()
            self.client.loop_stop()


def main(argv):
    args = parse_args(argv)
    with open(args.credentials, encoding="utf-8") as f:
        hives = json.load(f)["hives"]
    hive = next((h for h in hives if args.serial in (None, h["serial"])), None)
    if hive is None:
        sys.stderr.write(f"hive_device: no hive {args.serial} in {args.credentials}\n")
        return 2
    end_ms = (now_ms() - int(args.end_ago_s * 1000)) // 60_000 * 60_000
    start_ms = end_ms - args.minutes * 60_000
    batches, expected = build_backlog(hive, start_ms, args.minutes, args.batch_s)
    device = Hive(args, hive, batches)
    try:
        device.run()
    except (TimeoutError, OSError) as e:
        sys.stderr.write(f"hive_device: {e}\n")
        return 1
    print(json.dumps({
        "serial": hive["serial"], "start_ms": start_ms, "end_ms": end_ms,
        "batches": len(batches), "packets": sum(len(b.packets) for b in batches),
        "published": device.published, "retransmissions": device.retransmissions,
        "heartbeats": device.heartbeats, "acked_seq": device.acked_seq, "expected": expected,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
