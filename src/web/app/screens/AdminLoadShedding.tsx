// Admin → load shedding (GET/PUT /api/analysis/load-shedding): whether it runs, how long a point stays shed at least
// and at most (entered in minutes, sent in seconds), and the points in priority order with the values written when
// shed and when restored, each with its state now (shed since, the last write the gateway did not confirm). Saved as
// one replacement; the service's 400/409 reasons (e.g. removing a point shed now) are shown.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { AdminLinks } from '../components/adminLinks';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, t } from '../i18n';

type Row = { code: string; priority: string; shedValue: string; restoreValue: string };
const decimal = (text: string) => Number(text.trim().replace(',', '.'));
type Point = Answer<'/api/analysis/load-shedding'>['points'][number];

export default function AdminLoadShedding() {
  const view = useApi(() => api.GET('/api/analysis/load-shedding'));
  const v = view.data;
  const [form, setForm] = useState({ enabled: false, minOffMin: '5', maxShedMin: '30' });
  const [rows, setRows] = useState<Row[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => {
    if (!v) return;
    setForm({ enabled: v.enabled, minOffMin: String(v.minOffSec / 60), maxShedMin: String(v.maxShedSec / 60) });
    setRows(v.points.map((p) => ({ code: p.code, priority: String(p.priority), shedValue: String(p.shedValue), restoreValue: String(p.restoreValue) })));
  }, [v]);
  const setRow = (i: number, key: keyof Row, value: string) => setRows(rows.map((row, j) => (j === i ? { ...row, [key]: value } : row)));

  async function save(event: Event) {
    event.preventDefault();
    const numbers = [form.minOffMin, form.maxShedMin, ...rows.flatMap((r) => [r.priority, r.shedValue, r.restoreValue])].map(decimal);
    if (numbers.some((n) => !Number.isFinite(n)) || rows.some((r) => !r.code.trim())) return setProblem(t('shedding.badInput'));
    const { data, error, response } = await api.PUT('/api/analysis/load-shedding', {
      body: {
        enabled: form.enabled,
        minOffSec: Math.round(decimal(form.minOffMin) * 60),
        maxShedSec: Math.round(decimal(form.maxShedMin) * 60),
        points: rows.map((r) => ({
          code: r.code.trim(),
          priority: decimal(r.priority),
          shedValue: decimal(r.shedValue),
          restoreValue: decimal(r.restoreValue),
        })),
      },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t(data.enabled ? 'shedding.savedOn' : 'shedding.savedOff'));
    view.reload();
  }

  const state = new Map((v?.points ?? []).map((p) => [p.code, p]));
  return (
    <section>
      <h1>{t('shedding.title')}</h1>
      <AdminLinks here="/admin/load-shedding" />
      <p class="muted">{t('shedding.intro')}</p>
      <Problem text={problem ?? view.problem} />
      {v && (
        <form class="card stack" onSubmit={save} noValidate>
          <label class="check">
            <input type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })} />
            {t('shedding.enabled')}
          </label>
          <div class="filters">
            <Field label={t('shedding.minOff')}>
              {(id) => <input id={id} inputMode="decimal" value={form.minOffMin} onInput={(e) => setForm({ ...form, minOffMin: e.currentTarget.value })} />}
            </Field>
            <Field label={t('shedding.maxShed')}>
              {(id) => <input id={id} inputMode="decimal" value={form.maxShedMin} onInput={(e) => setForm({ ...form, maxShedMin: e.currentTarget.value })} />}
            </Field>
          </div>
          <div class="table-scroll">
            <table>
              <caption class="sr-only">{t('shedding.points')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('shedding.code')}</th>
                  <th scope="col">{t('shedding.priority')}</th>
                  <th scope="col">{t('shedding.shedValue')}</th>
                  <th scope="col">{t('shedding.restoreValue')}</th>
                  <th scope="col">{t('shedding.state')}</th>
                  <th scope="col">
                    <span class="sr-only">{t('shedding.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row, i) => (
                  <PointRow
                    key={i}
                    row={row}
                    n={i + 1}
                    now={state.get(row.code.trim())}
                    onSet={(key, value) => setRow(i, key, value)}
                    onRemove={() => setRows(rows.filter((_, j) => j !== i))}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button type="button" onClick={() => setRows([...rows, { code: '', priority: String(rows.length + 1), shedValue: '0', restoreValue: '1' }])}>
              {t('shedding.addRow')}
            </button>
            <button type="submit" class="primary">
              {t('shedding.save')}
            </button>
          </div>
          <Done text={done} />
        </form>
      )}
    </section>
  );
}

/** A point to shed: its code, priority and the values written when shed and restored, with its state now. */
function PointRow(props: { row: Row; n: number; now: Point | undefined; onSet: (key: keyof Row, value: string) => void; onRemove: () => void }) {
  const { row, n, now, onSet, onRemove } = props;
  return (
    <tr data-point={row.code}>
      <td>
        <input aria-label={t('shedding.codeOf', { n })} value={row.code} onInput={(e) => onSet('code', e.currentTarget.value)} />
      </td>
      <td>
        <input
          aria-label={t('shedding.priorityOf', { n })}
          inputMode="numeric"
          value={row.priority}
          onInput={(e) => onSet('priority', e.currentTarget.value)}
        />
      </td>
      <td>
        <input
          aria-label={t('shedding.shedValueOf', { n })}
          inputMode="decimal"
          value={row.shedValue}
          onInput={(e) => onSet('shedValue', e.currentTarget.value)}
        />
      </td>
      <td>
        <input
          aria-label={t('shedding.restoreValueOf', { n })}
          inputMode="decimal"
          value={row.restoreValue}
          onInput={(e) => onSet('restoreValue', e.currentTarget.value)}
        />
      </td>
      <td class="wrap" data-field="state">
        {now?.shed ? t('shedding.shedSince', { at: dateTime(now.shedAt) }) : now ? t('shedding.normal') : t('shedding.unsaved')}
        {now?.lastError && <span class="bad"> · {t('shedding.lastError', { error: now.lastError, at: dateTime(now.lastErrorAt) })}</span>}
      </td>
      <td>
        <button type="button" class="link" onClick={onRemove}>
          {t('shedding.removeRow', { n })}
        </button>
      </td>
    </tr>
  );
}
