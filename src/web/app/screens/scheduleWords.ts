// A schedule in words ↔ the 5-field cron the API stores: monthly on day N, weekly on a day, daily, each at HH:MM.
// Anything else the API holds (set through the API) is shown as its cron text.
export type Schedule = { every: 'month'; day: number; time: string } | { every: 'week'; weekday: number; time: string } | { every: 'day'; time: string };

export function toCron(schedule: Schedule): string {
  const [hour, minute] = schedule.time.split(':').map(Number);
  if (schedule.every === 'month') return `${minute} ${hour} ${schedule.day} * *`;
  if (schedule.every === 'week') return `${minute} ${hour} * * ${schedule.weekday}`;
  return `${minute} ${hour} * * *`;
}

const pad = (n: number) => String(n).padStart(2, '0');

export function fromCron(cron: string): Schedule | null {
  const match = /^(\d{1,2}) (\d{1,2}) (\*|\d{1,2}) \* (\*|[0-6])$/.exec(cron.trim());
  if (!match) return null;
  const [, minute, hour, day, weekday] = match;
  const time = `${pad(Number(hour))}:${pad(Number(minute))}`;
  if (day !== '*' && weekday === '*') return { every: 'month', day: Number(day), time };
  if (day === '*' && weekday !== '*') return { every: 'week', weekday: Number(weekday), time };
  if (day === '*' && weekday === '*') return { every: 'day', time };
  return null;
}
