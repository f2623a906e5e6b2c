// The report templates in the person's language (the service names them in English), and the template that fits
// a plan's period: "every month" is the monthly energy report, "every week" the weekly one, "every day" month to date.
import type { ReportTemplate as Template } from '../api/types';

export type { Template };
import { t, type Key } from '../i18n';

const TRANSLATED = new Set(['weekly-energy', 'monthly-energy', 'alerts-faults', 'maintenance-due', 'month-to-date']);

/** The energy templates, each bound to the period it reports on. */
const FOR_PERIOD: Record<'month' | 'week' | 'day', string> = { month: 'monthly-energy', week: 'weekly-energy', day: 'month-to-date' };

export function templateName(template: Template): string {
  return TRANSLATED.has(template.key) ? t(`reportTemplate.${template.key}` as Key) : template.name;
}

export function templateDescription(template: Template): string {
  return TRANSLATED.has(template.key) ? t(`reportTemplate.${template.key}.description` as Key) : template.description;
}

/**
 * The template to show when the period changes: the period's own energy template when the current one is one of the
 * period-bound energy templates (or none is chosen yet); a template about something else (alerts, maintenance) stays.
 */
export function templateForPeriod(templates: Template[], every: keyof typeof FOR_PERIOD, current?: Template): Template | undefined {
  const periodBound = new Set(Object.values(FOR_PERIOD));
  if (current && !periodBound.has(current.key)) return current;
  return templates.find((template) => template.key === FOR_PERIOD[every]) ?? current ?? templates[0];
}
