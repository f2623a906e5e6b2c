// Numbers, money, dates and times as the site writes them: Intl in the site's locale and time zone, formats built once.
import { translator, type Translate } from './messages.ts';

export type SiteLocale = { locale: string; timezone: string; currency: string };

/** A locale Intl knows (an unknown or malformed tag in the settings falls back to en-US instead of throwing). */
export function supportedLocale(locale: string): string {
  try {
    return Intl.NumberFormat.supportedLocalesOf([locale]).length ? locale : 'en-US';
  } catch {
    return 'en-US';
  }
}

export class SiteFormat {
  readonly locale: string;
  readonly timezone: string;
  readonly currency: string;
  readonly t: Translate;
  private readonly numbers = new Map<number, Intl.NumberFormat>();
  private readonly moneyFormat: Intl.NumberFormat;
  private readonly percentFormat: Intl.NumberFormat;
  private readonly changeFormat: Intl.NumberFormat;
  private readonly dateFormat: Intl.DateTimeFormat;
  private readonly shortDateFormat: Intl.DateTimeFormat;
  private readonly dateTimeFormat: Intl.DateTimeFormat;
  private readonly monthFormat: Intl.DateTimeFormat;

  constructor(site: SiteLocale) {
    this.locale = supportedLocale(site.locale);
    this.timezone = site.timezone;
    this.currency = site.currency;
    this.t = translator(this.locale);
    this.moneyFormat = new Intl.NumberFormat(this.locale, { style: 'currency', currency: site.currency });
    this.percentFormat = new Intl.NumberFormat(this.locale, { style: 'percent', maximumFractionDigits: 1 });
    this.changeFormat = new Intl.NumberFormat(this.locale, { style: 'percent', maximumFractionDigits: 1, minimumFractionDigits: 1, signDisplay: 'exceptZero' });
    // Site days are plain dates: formatted at UTC noon of that date so no zone can move them to a neighbour.
    this.dateFormat = new Intl.DateTimeFormat(this.locale, { timeZone: 'UTC', dateStyle: 'medium' });
    this.shortDateFormat = new Intl.DateTimeFormat(this.locale, { timeZone: 'UTC', day: 'numeric', month: 'numeric' });
    this.monthFormat = new Intl.DateTimeFormat(this.locale, { timeZone: 'UTC', month: 'long', year: 'numeric' });
    this.dateTimeFormat = new Intl.DateTimeFormat(this.locale, { timeZone: site.timezone, dateStyle: 'medium', timeStyle: 'short' });
  }

  /** A number with grouping and exactly `digits` decimals. */
  number(value: number, digits = 0): string {
    let format = this.numbers.get(digits);
    if (!format) this.numbers.set(digits, (format = new Intl.NumberFormat(this.locale, { minimumFractionDigits: digits, maximumFractionDigits: digits })));
    return format.format(value);
  }

  kwh(value: number): string {
    return `${this.number(value, 1)} kWh`;
  }

  kw(value: number): string {
    return `${this.number(value, 1)} kW`;
  }

  carbon(value: number): string {
    return `${this.number(value, 1)} kg CO₂e`;
  }

  money(value: number): string {
    return this.moneyFormat.format(value);
  }

  /** A share (0.987 → "98.7%"). */
  percent(share: number): string {
    return this.percentFormat.format(share);
  }

  /** A relative change with its sign (0.052 → "+5.2%"). */
  change(share: number): string {
    return this.changeFormat.format(share);
  }

  /** A site day (YYYY-MM-DD). */
  date(day: string): string {
    return this.dateFormat.format(new Date(`${day}T12:00:00Z`));
  }

  /** A site day, short (axis labels). */
  shortDate(day: string): string {
    return this.shortDateFormat.format(new Date(`${day}T12:00:00Z`));
  }

  /** A calendar month (YYYY-MM). */
  month(month: string): string {
    return this.monthFormat.format(new Date(`${month}-15T12:00:00Z`));
  }

  /** An instant (ISO text or ms) as the site's wall clock. */
  dateTime(at: string | number): string {
    return this.dateTimeFormat.format(new Date(at));
  }
}
