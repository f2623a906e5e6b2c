// Site time zones for tests that must not depend on the hour of the run.

/**
 * A fixed-offset zone (Etc/GMT±N) where it is between 12:00 and 12:59 at `at`: the site's today then has hours behind
 * it and ahead of it whatever the hour of the run. Etc/GMT-12 is UTC+12 (the POSIX sign is inverted).
 */
export function noonZone(at = new Date()): string {
  const offset = 12 - at.getUTCHours();
  return offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}
