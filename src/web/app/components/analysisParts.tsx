// What the analysis screens share: the links between them, the target (the site, an area or one meter) as a labelled
// select, and site days as YYYY-MM-DD in the site's time zone.
import { api } from '../api/client';
import { siteTimeZone, t, type Key } from '../i18n';
import { pathOf, route } from '../state/router';
import { Field } from './Field';
import { useApi } from './useApi';

const PAGES: { href: string; label: Key }[] = [
  { href: '/analysis', label: 'analysis.tab.compare' },
  { href: '/analysis/baseline', label: 'analysis.tab.baseline' },
  { href: '/analysis/enpi', label: 'analysis.tab.enpi' },
  { href: '/analysis/anomalies', label: 'analysis.tab.anomalies' },
];

export function AnalysisTabs() {
  const path = pathOf(route.value);
  return (
    <nav class="tabs" aria-label={t('analysis.tabs')}>
      {PAGES.map((page) => (
        <a key={page.href} class="tab" href={page.href} aria-current={path === page.href ? 'page' : undefined}>
          {t(page.label)}
        </a>
      ))}
    </nav>
  );
}

/** "site", "area:<name>" or "meter:<id>". */
export type Target = string;

export function targetQuery(target: Target): { area?: string; meterId?: number } {
  if (target.startsWith('area:')) return { area: target.slice(5) };
  if (target.startsWith('meter:')) return { meterId: Number(target.slice(6)) };
  return {};
}

export function TargetSelect({ value, onChange }: { value: Target; onChange: (target: Target) => void }) {
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const areas = useApi(() => api.GET('/api/energy/areas'));
  return (
    <Field label={t('analysis.target')}>
      {(id) => (
        <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="site">{t('analysis.target.site')}</option>
          <optgroup label={t('analysis.target.areas')}>
            {(areas.data?.areas ?? []).map((area) => (
              <option key={area.name} value={`area:${area.name}`}>
                {area.name}
              </option>
            ))}
          </optgroup>
          <optgroup label={t('analysis.target.meters')}>
            {(meters.data?.items ?? [])
              .filter((meter) => meter.kind !== 'power')
              .map((meter) => (
                <option key={meter.id} value={`meter:${meter.id}`}>
                  {meter.name}
                </option>
              ))}
          </optgroup>
        </select>
      )}
    </Field>
  );
}

/** A date as YYYY-MM-DD in the site's time zone, `offsetDays` from now. */
export function siteDay(offsetDays = 0): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: siteTimeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    Date.now() + offsetDays * 86_400_000,
  );
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
