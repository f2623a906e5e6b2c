// One unit rule for every size emsctl prints as text: binary units named as such (B, KiB, MiB, GiB, TiB; 1 KiB = 1024 B),
// one decimal above bytes. --json gives the same sizes in bytes. (docs/operating.md, "Sizes".)
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}
