import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { serveOptions } from '../../src/cli/serve.js';

/** `occusim serve` as one of several ingest processes: its options, and the mistakes refused in one line. */
function refusal(flags: Record<string, string | boolean>): string {
  try {
    serveOptions(flags);
    return 'accepted';
  } catch (err) {
    expect(isAppError(err, 'USAGE')).toBe(true);
    return (err as Error).message;
  }
}

describe('occusim serve --broker --share-group --partition --shards', () => {
  it('reads the scale-out options', () => {
    expect(
      serveOptions({ broker: 'mqtt://b:1883', 'share-group': 'occusim', partition: '2/3', shards: '4' }).scaleOut,
    ).toEqual({ brokerUrl: 'mqtt://b:1883', shareGroup: 'occusim', partition: { index: 2, count: 3 }, shards: 4 });
    expect(serveOptions({}).scaleOut).toBeNull();
  });

  it('refuses scale-out options without an external broker, a partition without a share group and malformed values', () => {
    expect(refusal({ partition: '1/2' })).toBe(
      '--partition needs --broker mqtt://…: the broker the ingest processes and the shards share',
    );
    expect(refusal({ shards: '2' })).toBe(
      '--shards needs --broker mqtt://…: the broker the ingest processes and the shards share',
    );
    expect(refusal({ broker: 'mqtt://b', partition: '1/2' })).toBe(
      '--partition needs --share-group: without it every process receives every batch',
    );
    expect(refusal({ broker: 'mqtt://b', 'share-group': 'a/b' })).toBe(
      '--share-group must be 1–64 letters, digits, _ or -, got "a/b"',
    );
    expect(refusal({ broker: 'mqtt://b', 'share-group': 'g' })).toBe(
      '--share-group needs --partition j/k (1/1 for one process): each process aggregates only its floors',
    );
    expect(refusal({ broker: 'mqtt://b', 'share-group': 'g', partition: '3/2' })).toBe(
      '--partition 3/2: want j/k with 1 ≤ j ≤ k',
    );
    expect(refusal({ broker: 'mqtt://b', shards: '0' })).toBe('--shards must be an integer ≥ 1, got "0"');
  });
});
