// What the portfolio screens share: durations in the person's language, the health badge with its reasons, the XLSX
// download button, the pager of the server-side pages, and the browser's time zone for dates (a fleet spans sites and zones).
import { useState } from 'preact/hooks';
import { Problem } from '../components/Field';
import { locale, t } from '../i18n';
import { fleetDownload } from './session';
import type { HealthGrade, HealthReason } from './types';

export const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** 42 s, 15 min, 3.5 h (below 36 h), 2.1 days: the unit that keeps the figure short. Negative for a clock behind. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const abs = Math.abs(seconds);
  const [value, unit, digits] =
    abs < 120 ? [seconds, 'second', 0] : abs < 7200 ? [seconds / 60, 'minute', 0] : abs < 129_600 ? [seconds / 3600, 'hour', 1] : [seconds / 86_400, 'day', 1];
  return new Intl.NumberFormat(locale.value, { style: 'unit', unit: unit as string, unitDisplay: 'short', maximumFractionDigits: digits as number }).format(
    value as number,
  );
}

export const GRADE_KEYS = { healthy: 'fleet.gradeHealthy', warning: 'fleet.gradeWarning', stale: 'fleet.gradeStale' } as const;
const GRADE_CLASS = { healthy: 'info', warning: 'warning', stale: 'critical' } as const;

export const REASON_KEYS = {
  never: 'fleet.reasonNever',
  revoked: 'fleet.reasonRevoked',
  lag: 'fleet.reasonLag',
  refusing: 'fleet.reasonRefusing',
  clock: 'fleet.reasonClock',
  skew: 'fleet.reasonSkew',
  completeness: 'fleet.reasonCompleteness',
  backup: 'fleet.reasonBackup',
} as const;

export function Grade({ grade, reasons }: { grade: HealthGrade; reasons: HealthReason[] }) {
  return (
    <span class="grade">
      <span class={`badge ${GRADE_CLASS[grade]} grade-${grade}`}>{t(GRADE_KEYS[grade])}</span>
      {reasons.length > 0 && <span class="muted reasons-inline">{reasons.map((r) => t(REASON_KEYS[r])).join(', ')}</span>}
    </span>
  );
}

export function DownloadXlsx({ path }: { path: string }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div class="actions">
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setProblem(await fleetDownload(path));
          setBusy(false);
        }}
      >
        {t('fleet.downloadXlsx')}
      </button>
      <Problem text={problem} />
    </div>
  );
}

/** Previous / page n of m / next under a list the fleet answers a page at a time (shown only when there is more than one). */
export function Pager({ page, pageSize, total, onPage }: { page: number; pageSize: number; total: number; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  return (
    <div class="actions pager">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t('fleet.previous')}
      </button>
      <span>{t('fleet.pageOf', { page, pages })}</span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t('fleet.next')}
      </button>
    </div>
  );
}
