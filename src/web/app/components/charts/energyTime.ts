// What the energy screen's charts share: their colours, site days as strings, and a point's time as people read it at each
// resolution (in the site's zone). Part of the chart chunk.
import { locale, siteTimeZone } from '../../i18n';

export type Resolution = '15min' | 'hour' | 'day' | 'month';
export type Point = { start: string; kwh: number | null };

export const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626', '#4b5563', '#c026d3'];

export function siteDayOf(date: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: siteTimeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
}
export function siteToday(): string {
  return siteDayOf(new Date());
}
export function addDays(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + n);
  return date.toISOString().slice(0, 10);
}
export function addMonths(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCMonth(date.getUTCMonth() + n);
  return date.toISOString().slice(0, 10);
}
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

export function fmt(options: Intl.DateTimeFormatOptions) {
  return (seconds: number) => new Intl.DateTimeFormat(locale.value, { ...options, timeZone: siteTimeZone }).format(new Date(seconds * 1000));
}
export const LABELS: Record<Resolution, Intl.DateTimeFormatOptions> = {
  '15min': { weekday: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' },
  hour: { weekday: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' },
  day: { weekday: 'short', day: 'numeric', month: 'short' },
  month: { month: 'long', year: 'numeric' },
};
export const TICKS: Record<Resolution, Intl.DateTimeFormatOptions> = {
  '15min': { hour: '2-digit', minute: '2-digit' },
  hour: { hour: '2-digit', minute: '2-digit' },
  day: { day: 'numeric', month: 'short' },
  month: { month: 'short' },
};
/** A site day (YYYY-MM-DD) as people read it, without moving it through a time zone. */
export function dayLabel(day: string, options: Intl.DateTimeFormatOptions = LABELS.day): string {
  return new Intl.DateTimeFormat(locale.value, { ...options, timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}
