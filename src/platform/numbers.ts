// Numbers as the answers state them.

/**
 * `value` to `places` decimals by `Math.round`: a half goes up, toward +∞ (`round(-2.5, 0)` is -2), as far as the
 * binary value is a half. The one rounding of the figures the answers state (money to the cent, energy to the Wh), once
 * written out in each file that used it; billing's integer cents are `cents` in `billing/bill.ts`.
 */
export function round(value: number, places: number): number {
  const scale = 10 ** places;
  return Math.round(value * scale) / scale;
}
