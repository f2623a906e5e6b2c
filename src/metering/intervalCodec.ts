// The stored form of a day's intervals: fixed-point integers, delta- and varint-encoded, with a presence bitmap only
// when some interval has no data, and the flags as a list of runs. ~2.5 bytes per interval instead of Float32 + a flag
// byte (5); rows written before (Float32, a byte per flag) are still read as they are.

/** kWh are kept to 0.1 Wh (the API shows 4 decimals); a power meter's highest reading to 1 W (the API shows 3). */
export const KWH_SCALE = 10_000;
export const KW_SCALE = 1_000;

const ALL_PRESENT = 0;
const NONE_PRESENT = 1;
const BITMAP = 2;

/**
 * A blob of the first format is 4 bytes per interval (Float32); this one never has a length that is a multiple of 4
 * (a padding byte is added when it would), so the length alone tells the two apart.
 */
export function isLegacyBlob(blob: Uint8Array): boolean {
  return blob.length % 4 === 0;
}

/** The number `value` rounded to the scale's resolution; what a stored value reads back as. */
export function quantize(value: number, scale: number): number {
  return Math.round(value * scale) / scale;
}

export function encodeValues(values: ArrayLike<number>, scale: number): Buffer {
  const count = values.length;
  if (count > 255) throw new RangeError(`a day of ${count} intervals cannot be stored`);
  const out: number[] = [count];
  let present = 0;
  for (let i = 0; i < count; i += 1) if (Number.isFinite(values[i])) present += 1;
  if (present === count) out.push(ALL_PRESENT);
  else if (present === 0) out.push(NONE_PRESENT);
  else {
    out.push(BITMAP);
    for (let i = 0; i < count; i += 8) {
      let byte = 0;
      for (let bit = 0; bit < 8 && i + bit < count; bit += 1) if (Number.isFinite(values[i + bit])) byte |= 1 << bit;
      out.push(byte);
    }
  }
  let previous = 0;
  for (let i = 0; i < count; i += 1) {
    const value = values[i];
    if (!Number.isFinite(value)) continue;
    const units = Math.round(value * scale);
    const delta = units - previous;
    previous = units;
    // Zig-zag (small negative deltas stay small), then 7 bits a byte; plain arithmetic: values pass 2^31.
    let zigzag = delta >= 0 ? delta * 2 : -delta * 2 - 1;
    while (zigzag >= 128) {
      out.push((zigzag % 128) | 128);
      zigzag = Math.floor(zigzag / 128);
    }
    out.push(zigzag);
  }
  if (out.length % 4 === 0) out.push(0);
  return Buffer.from(out);
}

/** A stored interval blob (either format) as numbers; NaN where an interval has no data. */
export function decodeValues(blob: Uint8Array, scale: number): Float64Array {
  if (isLegacyBlob(blob)) {
    const floats = new Float32Array(blob.length / 4);
    // A copy: the statement's buffer may be reused, and Float32Array needs 4-byte alignment.
    new Uint8Array(floats.buffer).set(blob);
    return Float64Array.from(floats);
  }
  const values = new Float64Array(blob[0]);
  decodeValuesInto(blob, scale, values);
  return values;
}

/**
 * decodeValues into `values` (at least as long as the day; what is past it is left as it is), for a reader that decodes
 * many days into one array (the exports: a buffer per stored day was garbage freed late, issue 27). Answers the count.
 */
export function decodeValuesInto(blob: Uint8Array, scale: number, values: Float64Array): number {
  if (isLegacyBlob(blob)) {
    const count = blob.length / 4;
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    for (let i = 0; i < count; i += 1) values[i] = view.getFloat32(i * 4, true);
    return count;
  }
  const count = blob[0];
  const mode = blob[1];
  values.fill(NaN, 0, count);
  if (mode === NONE_PRESENT) return count;
  let at = 2;
  const bitmap = mode === BITMAP ? at : -1;
  if (mode === BITMAP) at += Math.ceil(count / 8);
  let previous = 0;
  for (let i = 0; i < count; i += 1) {
    if (bitmap >= 0 && !(blob[bitmap + (i >> 3)] & (1 << (i & 7)))) continue;
    let zigzag = 0;
    let factor = 1;
    for (;;) {
      const byte = blob[at++];
      zigzag += (byte & 127) * factor;
      if (byte < 128) break;
      factor *= 128;
    }
    previous += zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
    values[i] = previous / scale;
  }
  return count;
}

/** Flags as runs of (first interval, length, flags); an empty blob when no interval has any. */
export function encodeFlags(flags: Uint8Array): Buffer {
  const out: number[] = [];
  for (let i = 0; i < flags.length; ) {
    const value = flags[i];
    let end = i + 1;
    while (end < flags.length && flags[end] === value && end - i < 255) end += 1;
    if (value !== 0) out.push(i, end - i, value);
    i = end;
  }
  return Buffer.from(out);
}

/** The flag byte of each interval; `values` is the row's kWh blob, which tells the format. */
export function decodeFlags(blob: Uint8Array, values: Uint8Array, count: number): Uint8Array {
  if (isLegacyBlob(values)) return new Uint8Array(blob);
  const flags = new Uint8Array(count);
  for (let i = 0; i + 2 < blob.length; i += 3) flags.fill(blob[i + 2], blob[i], Math.min(count, blob[i] + blob[i + 1]));
  return flags;
}

/** The number of intervals a stored kWh blob holds. */
export function intervalCount(blob: Uint8Array): number {
  return isLegacyBlob(blob) ? blob.length / 4 : blob[0];
}
