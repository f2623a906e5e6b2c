// Times as emsctl prints them beside a cron: in the zone the cron runs in. The backup schedule's cron runs in the
// box's time zone (src/platform/jobs/cron.ts boxTimezone(): the process's zone, /etc/localtime, or TZ when set).

/** The process's IANA time zone, e.g. Europe/Berlin (UTC when none is configured). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/** An ISO instant as "2026-11-24 03:30 +01:00" in the given zone (default: the process's). */
export function zonedTime(iso: string, timeZone = localTimeZone()): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : String(parts.timeZoneName).replace(/^GMT/, '');
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}
