// The links between the energy manager's desk screens (each its own chunk): statements, tenants and shares, runs and
// review, supplier bills, budgets, measures, tariffs and demand. Shared helpers of those screens live here too.
import type { paths } from '../api/schema';
import type { Answer } from '../api/types';
import { locale, t, type Key } from '../i18n';

export function DeskLinks({ here }: { here: string }) {
  const pages: { href: string; label: Key }[] = [
    { href: '/billing', label: 'desk.tab.statements' },
    { href: '/billing/tenants', label: 'desk.tab.tenants' },
    { href: '/billing/runs', label: 'desk.tab.runs' },
    { href: '/billing/supplier-bills', label: 'desk.tab.bills' },
    { href: '/billing/budgets', label: 'desk.tab.budgets' },
    { href: '/billing/measures', label: 'desk.tab.measures' },
    { href: '/billing/tariffs', label: 'desk.tab.tariffs' },
  ];
  return (
    <nav class="tabs" aria-label={t('desk.tabs')}>
      {pages.map((page) => (
        <a key={page.href} class="tab" href={page.href} aria-current={page.href === here ? 'page' : undefined}>
          {t(page.label)}
        </a>
      ))}
    </nav>
  );
}

/** A number typed as a person writes it: a decimal comma is a point; empty or not a number is NaN. */
export function decimal(text: string): number {
  const trimmed = text.trim().replace(',', '.');
  return trimmed === '' ? Number.NaN : Number(trimmed);
}

/** The last day of a period whose `to` is exclusive. */
export function lastDay(to: string): string {
  return new Date(Date.parse(`${to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/** The first day after `day` (a form's "to, included" as the API's exclusive `to`). */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** The JSON a GET answers with, from the generated API types (api/types.ts). */
export type Got<P extends keyof paths> = Answer<P>;

/** Money to the cent however large (a statement or a bill is read to the cent), in the app's locale. */
export function cents(value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined) return '–';
  try {
    return new Intl.NumberFormat(locale.value, { style: 'currency', currency, minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value);
  } catch {
    return `${value.toFixed(2)} ${currency}`;
  }
}
