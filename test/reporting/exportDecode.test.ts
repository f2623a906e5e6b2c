// The exports decode every stored day of a meter into one array (issue 27: a fresh array per stored day was garbage
// freed late). Reusing it must never let a value of an earlier day show through: a gap stays a gap, a shorter (DST)
// day reads its own intervals, and rows of the first format (Float32) read as decodeValues reads them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeValues, decodeValuesInto, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';

const same = (actual: ArrayLike<number>, expected: ArrayLike<number>) =>
  assert.deepEqual(
    Array.from(actual, (v) => (Number.isNaN(v) ? 'gap' : v)),
    Array.from(expected, (v) => (Number.isNaN(v) ? 'gap' : v)),
  );

describe('decodeValuesInto', () => {
  test('one array over days of every kind reads each day as decodeValues does, nothing of the day before', () => {
    const full = Array.from({ length: 100 }, (_, i) => 1 + i / 7);
    const gaps = Array.from({ length: 96 }, (_, i) => (i % 5 === 0 ? Number.NaN : 2.5 + i / 3));
    const none = new Array(96).fill(Number.NaN);
    const short = Array.from({ length: 92 }, (_, i) => 0.25 * i);
    const legacy = Buffer.from(new Float32Array(Array.from({ length: 96 }, (_, i) => 0.5 + i)).buffer);
    const blobs = [encodeValues(full, KWH_SCALE), encodeValues(gaps, KWH_SCALE), encodeValues(none, KWH_SCALE), encodeValues(short, KWH_SCALE), legacy];
    const reused = new Float64Array(100);
    for (const blob of blobs) {
      const count = decodeValuesInto(blob, KWH_SCALE, reused);
      const expected = decodeValues(blob, KWH_SCALE);
      assert.equal(count, expected.length);
      same(reused.subarray(0, count), expected);
    }
    // A blob read at an offset inside a larger buffer (as a statement may hand it over) reads the same.
    const pool = Buffer.alloc(blobs[1].length + 3);
    blobs[1].copy(pool, 3);
    const count = decodeValuesInto(pool.subarray(3), KWH_SCALE, reused);
    same(reused.subarray(0, count), decodeValues(blobs[1], KWH_SCALE));
  });
});
