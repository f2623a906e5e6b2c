// Grandfather-father-son retention: which backups to keep, by day, ISO week and month in the box's local time.

/** How many days, weeks and months keep their newest backup. */
export type RetentionPolicy = { daily: number; weekly: number; monthly: number };

export const DEFAULT_RETENTION: RetentionPolicy = { daily: 7, weekly: 4, monthly: 6 };

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function dayKey(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** ISO 8601 week (Monday first; week 1 holds the year's first Thursday) of the local date, e.g. 2026-W05. */
function weekKey(date: Date): string {
  // The local calendar date as a UTC date, so the arithmetic below never meets a daylight-saving change.
  const thursday = new Date(Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()));
  thursday.setUTCDate(thursday.getUTCDate() - ((thursday.getUTCDay() + 6) % 7) + 3);
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / 86_400_000 / 7);
  return `${thursday.getUTCFullYear()}-W${pad(week)}`;
}

function monthKey(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}`;
}

/** Every backup younger than this is kept whatever the policy: two manual runs in one afternoon both stay. */
export const KEEP_ALL_WITHIN_MS = 24 * 3_600_000;

/**
 * The names to keep. Every backup of the last 24 hours; then, as restic's keep-daily/weekly/monthly count them,
 * walking from the newest backup back, each of the last `daily` days that has a backup keeps its newest one,
 * likewise the last `weekly` ISO weeks and `monthly` months. One backup may count for all three. The newest
 * backup is always kept. Backups taken more often than daily (emsctl, an hourly cron) thin out to one a day.
 */
export function backupsToKeep(backups: ReadonlyArray<{ name: string; createdAt: string }>, policy: RetentionPolicy, now = Date.now()): Set<string> {
  const newestFirst = [...backups].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  const keep = new Set<string>();
  if (newestFirst.length) keep.add(newestFirst[0].name);
  const buckets: Array<{ limit: number; key: (date: Date) => string; seen: Set<string> }> = [
    { limit: policy.daily, key: dayKey, seen: new Set() },
    { limit: policy.weekly, key: weekKey, seen: new Set() },
    { limit: policy.monthly, key: monthKey, seen: new Set() },
  ];
  for (const backup of newestFirst) {
    const when = new Date(backup.createdAt);
    if (now - when.getTime() < KEEP_ALL_WITHIN_MS) keep.add(backup.name);
    for (const bucket of buckets) {
      const key = bucket.key(when);
      if (bucket.seen.has(key) || bucket.seen.size >= bucket.limit) continue;
      bucket.seen.add(key);
      keep.add(backup.name);
    }
  }
  return keep;
}

export function describeRetention(policy: RetentionPolicy): string {
  return `${policy.daily} daily, ${policy.weekly} weekly, ${policy.monthly} monthly`;
}
