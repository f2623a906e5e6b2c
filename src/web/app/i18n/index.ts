// The app's words in en/de/fr/es (one JSON file each, en the reference and the fallback), chosen from the person's
// browser languages, else the site's locale (served on <html data-site-locale>), else English. Numbers and dates are
// formatted with the site's locale when it speaks the chosen language (de-CH keeps its own separators), else the
// browser's tag for it.
import { signal } from '@preact/signals';
import en from './en.json';

export type Key = keyof typeof en;
type Dictionary = Record<string, string>;

export const LANGUAGES = ['en', 'de', 'fr', 'es'] as const;
export type Language = (typeof LANGUAGES)[number];

const loaders: Record<Exclude<Language, 'en'>, () => Promise<{ default: Dictionary }>> = {
  de: () => import('./de.json'),
  fr: () => import('./fr.json'),
  es: () => import('./es.json'),
};

const root = document.documentElement;
export const siteLocale = root.dataset.siteLocale || 'en';
/** The site's zone: a live binding, changed at once by applySite (every format reads it when it runs). */
export let siteTimeZone = root.dataset.siteTimezone || 'UTC';
export const siteCurrency = root.dataset.siteCurrency || 'EUR';
/** The site's name in the header and the page title. */
export const siteName = signal(root.dataset.siteName || 'EMS');

/** Settings saved: the new name and zone apply to the open app at once, without a reload. */
export function applySite(name: string, timezone: string): void {
  siteTimeZone = timezone;
  root.dataset.siteTimezone = timezone;
  root.dataset.siteName = name;
  siteName.value = name;
}

/** The browser's own zone (the first-run guess), or undefined when it gives none. */
export function browserTimeZone(): string | undefined {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
}

function supported(tag: string): Language | undefined {
  const base = tag.toLowerCase().split('-')[0];
  return (LANGUAGES as readonly string[]).includes(base) ? (base as Language) : undefined;
}

export function chooseLanguage(browser: readonly string[], site: string): { language: Language; locale: string } {
  for (const tag of browser) {
    const language = supported(tag);
    if (language) return { language, locale: supported(site) === language ? site : tag };
  }
  const language = supported(site) ?? 'en';
  return { language, locale: supported(site) ? site : 'en' };
}

const chosen = chooseLanguage(navigator.languages?.length ? navigator.languages : [navigator.language], siteLocale);
/** The browser's choice: what a person who chose no language of their own sees. */
export const browserLanguage: Language = chosen.language;
export const language = signal<Language>('en');
export const locale = signal<string>(chosen.locale);
let dictionary: Dictionary = en;

let loads = 0;
export async function loadLanguage(next: Language = chosen.language): Promise<void> {
  // The last asked wins: the browser's language loading at start must not land after the person's own.
  const mine = ++loads;
  const words = next === 'en' ? en : { ...en, ...(await loaders[next]()).default };
  if (mine !== loads) return;
  dictionary = words;
  root.lang = next;
  // Numbers and dates: the site's locale when it speaks the language, else the browser's tag for it, else the language.
  locale.value =
    next === chosen.language
      ? chosen.locale
      : supported(siteLocale) === next
        ? siteLocale
        : ((navigator.languages ?? []).find((tag) => supported(tag) === next) ?? next);
  language.value = next;
}

/** A text with its {placeholders} filled. Reading `language` subscribes the calling component to a language change. */
export function t(key: Key, values: Record<string, string | number> = {}): string {
  void language.value;
  const text = dictionary[key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** The values that follow `prefix.` in a key: `Labelled<'faults.status'>` is 'open' | 'acknowledged' | …. */
export type Labelled<P extends string> = Key extends infer K ? (K extends `${P}.${infer V}` ? V : never) : never;

/**
 * An enum value's words: `label('faults.status', fault.status)` is t('faults.status.open'). The value's type must be
 * one the catalogue has a key for, so an enum the API widens fails `typecheck` here instead of showing a raw key.
 */
export function label<P extends string>(prefix: P, value: Labelled<P>, values?: Record<string, string | number>): string {
  return t(`${prefix}.${value}` as Key, values);
}

const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = locale.value + JSON.stringify(options);
  let format = numberFormats.get(key);
  if (!format) numberFormats.set(key, (format = new Intl.NumberFormat(locale.value, options)));
  return format;
}

/** 1,746 kWh / 1.746 kWh / 1 746 kWh: one decimal below 1000, none above. */
export function num(value: number | null | undefined, digits?: number): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const d = digits ?? (Math.abs(value) >= 1000 ? 0 : 1);
  return numberFormat({ minimumFractionDigits: d, maximumFractionDigits: d }).format(value);
}

export function money(value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined) return '–';
  try {
    return numberFormat({ style: 'currency', currency, maximumFractionDigits: Math.abs(value) >= 1000 ? 0 : 2 }).format(value);
  } catch {
    return `${num(value, 2)} ${currency}`;
  }
}

export function percent(value: number | null | undefined, signed = false): string {
  if (value === null || value === undefined) return '–';
  return numberFormat({ style: 'percent', maximumFractionDigits: 1, signDisplay: signed ? 'exceptZero' : 'auto' }).format(value);
}

export function dateTime(value: string | number | Date | null | undefined, timeZone = siteTimeZone): string {
  if (value === null || value === undefined) return '–';
  return new Intl.DateTimeFormat(locale.value, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(new Date(value));
}

/** The time of day with seconds, in the site's zone (the live badge's "stale since"). */
export function timeOfDay(value: string | number | Date, timeZone = siteTimeZone): string {
  return new Intl.DateTimeFormat(locale.value, { timeStyle: 'medium', timeZone }).format(new Date(value));
}

export function dateOnly(value: string | number | Date, timeZone = siteTimeZone): string {
  return new Intl.DateTimeFormat(locale.value, { dateStyle: 'medium', timeZone }).format(new Date(value));
}
