// Which split meters would bill the same energy twice (issue 51): each meter's energy written as a signed sum of
// leaves (a metered sub-meter, or the unmetered rest behind a supply), from what the meters say of themselves.
import type { BilledMeter } from './bill.ts';

/** Two split meters whose energy overlaps: `inner` lies beneath `outer`, or they share a leaf. */
export type DoubleCount = { meter: BilledMeter; other: BilledMeter; beneath: boolean; leaf: string };

/**
 * The meter tree, as EMS knows it:
 * - the one metered site meter of a utility (its supply point) carries every other metered import meter of that utility
 *   plus its own unmetered rest; with several metered site meters of a utility EMS is not told which feeds which, so
 *   each is a tree of its own;
 * - a virtual meter is the signed sum of its terms' leaves (so "main − T1 − T2" holds T3 and the unmetered rest, not T1);
 * - every other meter is a leaf.
 */
export function leavesOf(meters: BilledMeter[]): Map<number, Map<string, number>> {
  const byId = new Map(meters.map((meter) => [meter.id, meter]));
  const metered = (meter: BilledMeter) => meter.kind !== 'virtual' && meter.role === 'import';
  const supplies = new Map<string, BilledMeter[]>();
  for (const meter of meters) if (metered(meter) && meter.site) supplies.set(meter.commodity, [...(supplies.get(meter.commodity) ?? []), meter]);
  const memo = new Map<number, Map<string, number>>();
  const leaves = (meter: BilledMeter, seen: Set<number>): Map<string, number> => {
    const known = memo.get(meter.id);
    if (known) return known;
    const out = new Map<string, number>();
    const add = (leaf: string, weight: number) => {
      const next = (out.get(leaf) ?? 0) + weight;
      if (Math.abs(next) < 1e-9) out.delete(leaf);
      else out.set(leaf, next);
    };
    if (meter.kind === 'virtual') {
      if (seen.has(meter.id)) return out; // a cycle the meter checks refuse anyway: no leaves from it twice
      seen.add(meter.id);
      for (const term of meter.terms) {
        const inner = byId.get(term.meterId);
        if (inner) for (const [leaf, weight] of leaves(inner, seen)) add(leaf, term.sign * weight);
      }
      seen.delete(meter.id);
    } else if (metered(meter) && meter.site && supplies.get(meter.commodity)?.length === 1) {
      add(`rest:${meter.id}`, 1);
      for (const other of meters) if (other.id !== meter.id && metered(other) && other.commodity === meter.commodity) add(`meter:${other.id}`, 1);
    } else add(`meter:${meter.id}`, 1);
    memo.set(meter.id, out);
    return out;
  };
  return new Map(meters.map((meter) => [meter.id, leaves(meter, new Set())]));
}

/** The first overlap between `meter` and any of `others` (the meters already split), or null. */
export function doubleCount(meter: BilledMeter, others: BilledMeter[], all: BilledMeter[]): DoubleCount | null {
  return overlapIn(meter, others, positiveLeaves(all));
}

/** The first overlap among split meters (a run's check: the tree built once), or null. */
export function firstDoubleCount(split: BilledMeter[], all: BilledMeter[]): DoubleCount | null {
  const positive = positiveLeaves(all);
  for (let i = 0; i < split.length; i += 1) {
    const found = overlapIn(split[i], split.slice(i + 1), positive);
    if (found) return found;
  }
  return null;
}

function positiveLeaves(all: BilledMeter[]): (id: number) => Set<string> {
  const tree = leavesOf(all);
  const memo = new Map<number, Set<string>>();
  return (id) => {
    let found = memo.get(id);
    if (!found) memo.set(id, (found = new Set([...(tree.get(id) ?? new Map<string, number>())].filter(([, w]) => w > 0).map(([leaf]) => leaf))));
    return found;
  };
}

function overlapIn(meter: BilledMeter, others: BilledMeter[], positive: (id: number) => Set<string>): DoubleCount | null {
  const mine = positive(meter.id);
  for (const other of others) {
    if (other.id === meter.id) continue;
    const theirs = positive(other.id);
    const shared = [...mine].find((leaf) => theirs.has(leaf));
    if (shared === undefined) continue;
    const inside = (a: Set<string>, b: Set<string>) => [...a].every((leaf) => b.has(leaf));
    if (inside(mine, theirs)) return { meter, other, beneath: true, leaf: shared };
    if (inside(theirs, mine)) return { meter: other, other: meter, beneath: true, leaf: shared };
    return { meter, other, beneath: false, leaf: shared };
  }
  return null;
}

/** The refusal's sentence, naming both meters. */
export function describeDoubleCount(found: DoubleCount, byId: Map<number, BilledMeter>): string {
  const name = (meter: BilledMeter) => `"${meter.name}" (meter ${meter.id})`;
  if (found.beneath) return `${name(found.meter)} lies beneath ${name(found.other)}: splitting both would bill its energy twice`;
  const [kind, id] = found.leaf.split(':');
  const leaf = byId.get(Number(id));
  const what = kind === 'rest' ? `the unmetered rest behind ${leaf ? name(leaf) : `meter ${id}`}` : leaf ? name(leaf) : `meter ${id}`;
  return `${name(found.meter)} and ${name(found.other)} both hold the energy of ${what}: splitting both would bill it twice`;
}
