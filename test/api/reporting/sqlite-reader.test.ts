import { mkdtempSync } from 'node:fs';
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPresenceReader } from '../../../src/api/reporting/sqlite-reader.js';
import { storeSeries } from '../../../src/api/reporting/store-series.js';
import { SqliteStore } from '../../../src/cloud/store/sqlite-store.js';

const T0 = Date.UTC(2026, 2, 2, 7);
// Doubles whose shortest text is long: the reader must return them bit for bit.
const awkward = [0.1 + 0.2, 1 / 3, 2 / 3, 1e-7, 123456.789, 5e-324, 0, 7, 2.5, Math.PI];

describe('the read-only presence reader', () => {
  it('returns exactly the stored minutes of one space, in minute order, within the range', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'occusim-reader-')), 's.sqlite');
    const store = new SqliteStore(path);
    const rows = awkward.map((value, i) => ({ spaceId: 'room_a', minuteMs: T0 + (awkward.length - i) * 60_000, value, samples: 1 }));
    store.writePresenceMinutes([...rows, { spaceId: 'room_b', minuteMs: T0 + 60_000, value: 9, samples: 1 }]);
    const reader = openPresenceReader(path);
    const cols = reader.presenceColumns('room_a', T0, T0 + 3_600_000);
    const expected = store.presenceSeries('room_a', '1m', T0, T0 + 3_600_000);
    expect(Array.from(cols.minuteMs)).toEqual(expected.map((p) => p.bucketMs));
    expect(Array.from(cols.value)).toEqual(expected.map((p) => p.value));
    expect(Array.from(cols.value).every((v, i) => Object.is(v, expected[i]!.value))).toBe(true);
    expect(Array.from(reader.presenceColumns('room_a', T0 + 120_000, T0 + 240_000).minuteMs)).toEqual([T0 + 120_000, T0 + 180_000]);
    expect(reader.presenceColumns('room_none', T0, T0 + 3_600_000).minuteMs).toHaveLength(0);
    reader.close();
    store.close();
  });

  it('backs storeSeries columns when given the file, and the store itself otherwise', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'occusim-reader-')), 's.sqlite');
    const store = new SqliteStore(path);
    store.writePresenceMinutes(awkward.map((value, i) => ({ spaceId: 'room_a', minuteMs: T0 + i * 60_000, value, samples: 1 })));
    const series = storeSeries(store, catalogueFromScenario(), { dbPath: path });
    const viaFile = series.presenceColumns!('room_a', T0, T0 + 3_600_000);
    series.close();
    const viaStore = storeSeries(store, catalogueFromScenario()).presenceColumns!('room_a', T0, T0 + 3_600_000);
    expect(Array.from(viaFile.value)).toEqual(awkward);
    expect(Array.from(viaStore.value)).toEqual(awkward);
    expect(Array.from(viaFile.minuteMs)).toEqual(Array.from(viaStore.minuteMs));
    store.close();
  });
});
