import { round } from '../platform/numbers.ts';
// What a reading must pass before it counts: a time that has happened and is not too old, and for a counter, a step
// that is energy (a small decrease is register jitter, a reset is a real drop, a rollover happens only at the range).

/** How far ahead of the box's clock a reading's time may lie (two clocks never agree exactly). */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;
/** The span spreading and backfill ever cover, and the oldest reading taken: the same 7 days the history fill asks for. */
export const BACKFILL_MS = 7 * 86_400_000;
/** Larger than any real load behind one meter (100 MW): a counter jump beyond it is a replaced meter, not energy. */
export const MAX_PLAUSIBLE_KW = 100_000;
/** A counter decrease up to this is register jitter (100.2 → 100.15 kWh): held, never a reset. */
const JITTER_KWH = 1;
const JITTER_SHARE = 0.001;
/** A reset is a drop to at most this share of the last reading (a meter replaced or cleared starts near zero). */
const RESET_SHARE = 0.1;
/** A lower counter seen this many times in a row is the meter's new base (a reset to a non-zero value), not noise. */
export const REBASE_AFTER = 3;

export type Reading = { at: number; value: number };

export type TimeVerdict = { ok: true } | { ok: false; reason: 'future' | 'too old' };

/** A reading's time against the box's clock: beyond now + tolerance is refused, so is anything older than the backfill span. */
export function checkTime(at: number, now: number): TimeVerdict {
  if (at > now + FUTURE_TOLERANCE_MS) return { ok: false, reason: 'future' };
  if (at < now - BACKFILL_MS) return { ok: false, reason: 'too old' };
  return { ok: true };
}

export type CounterStep =
  | { kind: 'energy'; kwh: number }
  /** A small decrease: no energy, the last value is kept (the next increase counts from it). */
  | { kind: 'jitter' }
  /** Back near zero: the new reading is the energy since the reset. */
  | { kind: 'reset'; kwh: number }
  /** Wrapped at the counter's range (a power of ten): the energy across the wrap. */
  | { kind: 'rollover'; kwh: number }
  /** A jump larger than any real load, or a decrease that is neither jitter, reset nor rollover: not counted. */
  | { kind: 'implausible'; why: string };

/** The counter's range: the power of ten above its reading (a 6-digit register wraps 999999 → 0). */
export function counterRange(value: number): number {
  return 10 ** Math.max(1, Math.ceil(Math.log10(Math.abs(value) + 1)));
}

/** What a counter moving from `last` to `value` over `hours` means. */
export function counterStep(last: number, value: number, hours: number): CounterStep {
  const maxKwh = MAX_PLAUSIBLE_KW * hours;
  const delta = value - last;
  if (delta >= 0)
    return delta > maxKwh ? { kind: 'implausible', why: `a jump of ${round(delta, 3)} kWh in ${round(hours, 3)} h` } : { kind: 'energy', kwh: delta };
  const drop = -delta;
  if (drop <= Math.max(JITTER_KWH, JITTER_SHARE * Math.abs(last))) return { kind: 'jitter' };
  const range = counterRange(last);
  // A rollover only at the range: the last reading was in its top tenth and the new one is in the bottom tenth.
  if (last >= 0.9 * range && value >= 0 && value < 0.1 * range) {
    const wrapped = range - last + value;
    if (wrapped <= maxKwh) return { kind: 'rollover', kwh: wrapped };
  }
  if (value >= 0 && value <= RESET_SHARE * last) return value <= maxKwh ? { kind: 'reset', kwh: value } : { kind: 'reset', kwh: 0 };
  return { kind: 'implausible', why: `a decrease of ${round(drop, 3)} kWh (from ${round(last, 3)} to ${round(value, 3)})` };
}
