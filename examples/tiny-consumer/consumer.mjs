// A tiny webhook consumer for occusim's load tests (docs/load-testing.md): verifies each
// delivery with the Standard Webhooks library, dedupes by webhook-id, keeps the latest value of
// an occupancy minute by `occusim-sequence` and sums TRAFFIC per sensor-minute, and answers its
// state at GET /state in the NDJSON shape `occusim consumer-verify --actual-url` reads.
//
//   WEBHOOK_SECRET=whsec_… PORT=8787 node examples/tiny-consumer/consumer.mjs
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';
import { Webhook } from 'standardwebhooks';

const hook = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Set(); // webhook-ids applied (a real consumer keeps this in its database)
const state = new Map(); // `${type}|${subject}|${minute}` → { type, subject, minute, seq, value }
const SUBJECT = { FLOOR: 'floor_id', ROOM: 'room_id', ZONE: 'zone_id' };

function apply(id, seq, e) {
  if (seen.has(id)) return; // a retry or a duplicate: already applied
  seen.add(id);
  const subject = e.type === 'TRAFFIC' ? e.metadata.sensor_id : e.metadata[SUBJECT[e.type.split('_')[0]]];
  const minute = Math.floor(e.timestamp / 60_000) * 60_000;
  const key = `${e.type}|${subject}|${minute}`;
  const cell = state.get(key);
  if (e.type === 'TRAFFIC') {
    const sum = cell?.value ?? { in: 0, out: 0 };
    state.set(key, { type: e.type, subject, minute, seq, value: { in: sum.in + e.data.in, out: sum.out + e.data.out } });
  } else if (!cell || seq > cell.seq) {
    state.set(key, { type: e.type, subject, minute, seq, value: e.data }); // a later revision replaces an earlier one
  }
}

createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/state') {
    res.setHeader('content-type', 'application/x-ndjson');
    return res.end([...state.values()].map(({ type, subject, minute, value }) => `${JSON.stringify({ type, subject, minute, value })}\n`).join(''));
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      event = hook.verify(body, req.headers); // the raw body: re-serialised JSON fails the signature
    } catch {
      res.statusCode = 401;
      return res.end();
    }
    apply(req.headers['webhook-id'], Number(req.headers['occusim-sequence']), event);
    res.statusCode = 204;
    res.end();
  });
}).listen(Number(process.env.PORT ?? 8787), '127.0.0.1');
