import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScenario } from '/work/wt-resume/src/run/run-scenario.js';
import { loadScenarioFile } from '/work/wt-resume/src/scenario/load.js';
import { SqliteStore } from '/work/wt-resume/src/cloud/store/sqlite-store.js';

const file = '/work/wt-resume/scenarios/quickstart.yaml';
const loaded = loadScenarioFile(file, {});
if (!loaded.ok) throw new Error('bad');
const model = loaded.model;
const dir = mkdtempSync(join(tmpdir(), 'rs-'));
const dump = (db: string) => {
  const s = new SqliteStore(db);
  const spaces = [...model.floors.map((f) => f.id), ...model.rooms.map((r) => r.id), ...model.zones.map((z) => z.id)];
  const out = { presence: spaces.map((id) => [id, s.presenceMinutes(id)]), traffic: model.sensors.map((x) => [x.id, s.trafficMinutes(x.id)]) };
  s.close();
  return out;
};
const m = (r: any) => r.result.messages;
const A = Number(process.env.A ?? 10), B = Number(process.env.B ?? 20);
const whole = await runScenario(file, { durationMs: B * 60_000, dbPath: join(dir, 'w.sqlite'), platformThread: false });
const p1 = await runScenario(file, { durationMs: A * 60_000, dbPath: join(dir, 'p.sqlite'), platformThread: false });
if (process.env.FIX) {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(join(dir, 'p.sqlite'));
  const E = model.startMs + A * 60_000;
  const firsts = db.prepare('SELECT hive_serial, MIN(seq) AS s FROM batches WHERE received_at_ms >= ? GROUP BY hive_serial').all(E) as any[];
  console.log('forget', firsts, db.prepare('SELECT COUNT(*) n FROM batches WHERE received_at_ms >= ?').get(E));
  db.prepare('DELETE FROM batch_payloads WHERE (hive_serial, seq) IN (SELECT hive_serial, seq FROM batches WHERE received_at_ms >= ?)').run(E);
  db.prepare('DELETE FROM batches WHERE received_at_ms >= ?').run(E);
  for (const f of firsts) db.prepare('UPDATE hive_progress SET acked_seq = MIN(acked_seq, ?) WHERE hive_serial = ?').run(f.s - 1, f.hive_serial);
  db.close();
}
const p2 = await runScenario(file, { durationMs: B * 60_000, dbPath: join(dir, 'p.sqlite'), storePolicy: 'resume', platformThread: false });
console.log('whole', m(whole)); console.log('p1', m(p1)); console.log('p2', m(p2));
const dw = dump(join(dir, 'w.sqlite')), dp = dump(join(dir, 'p.sqlite'));
for (const k of ['presence', 'traffic'] as const) {
  for (let i = 0; i < dw[k].length; i++) {
    const [id, a] = dw[k][i] as any; const [, b] = dp[k][i] as any;
    const sa = JSON.stringify(a), sb = JSON.stringify(b);
    if (sa !== sb) {
      const am = new Map(a.map((r: any) => [r.minuteMs, JSON.stringify(r)])), bm = new Map(b.map((r: any) => [r.minuteMs, JSON.stringify(r)]));
      const diffs = [...new Set([...am.keys(), ...bm.keys()])].filter((x) => am.get(x) !== bm.get(x));
      console.log(k, id, 'differs at', diffs.map((x: any) => new Date(x).toISOString()), diffs.slice(0,2).map((x) => [am.get(x), bm.get(x)]));
    }
  }
}
console.log('done');
