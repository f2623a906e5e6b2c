// The desk → supplier bills: an operator enters a bill for a supply point (a site meter) — each band's kWh, the
// billed kW, standing charges and the total — and sees its check at once (POST /api/billing/supplier-bills answers
// it): each line billed against the shadow bill worked out from the meters and the dated tariffs, the difference and
// whether it is past the site's tolerance, and the intervals the meter has no data for. The bills entered are listed
// with their check (GET …/:id/check). Viewers read.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, cents, type Got, lastDay, nextDay } from '../components/deskLinks';
import { num, percent, siteCurrency, t } from '../i18n';
import { can } from '../state/session';

type Check = Got<'/api/billing/supplier-bills/{id}/check'>;

/** A line's name as a person reads it: "kWh peak" → "Energy, peak (kWh)". */
function lineName(line: string): string {
  if (line.startsWith('kWh ')) return t('desk.bill.lineKwh', { band: line.slice(4) });
  if (line === 'kWh') return t('desk.bill.lineGas');
  if (line === 'standingCharges') return t('desk.bill.standing');
  if (line === 'billedKw') return t('desk.bill.billedKw');
  if (line === 'total') return t('desk.bill.total');
  if (line === 'calorificValue') return t('desk.bill.calorific');
  return line;
}
const isMoney = (line: string) => line === 'standingCharges' || line === 'total';

export function CheckResult({ check }: { check: Check }) {
  const show = (line: string, value: number | null) => (value === null ? '–' : isMoney(line) ? cents(value, siteCurrency) : num(value, 2));
  return (
    <section class="alert" data-check={check.bill.id} aria-labelledby={`check-${check.bill.id}`}>
      <div class="row">
        <strong id={`check-${check.bill.id}`}>{t('desk.bill.checkOf', { reference: check.bill.reference || `#${check.bill.id}` })}</strong>
        <span class={`badge ${check.flagged ? 'critical' : 'info'}`} data-field="verdict">
          {t(check.flagged ? 'desk.bill.flagged' : 'desk.bill.passed')}
        </span>
        <span class="muted">
          {check.bill.from} – {lastDay(check.bill.to)} · {t('desk.bill.tolerance', { pct: num(check.tolerancePercent, 1) })}
        </span>
      </div>
      {check.missingIntervals > 0 && <p class="bad">{t('desk.bill.missing', { n: check.missingIntervals })}</p>}
      <table>
        <caption class="sr-only">{t('desk.bill.checkOf', { reference: check.bill.reference || `#${check.bill.id}` })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('desk.review.line')}</th>
            <th scope="col" class="n">
              {t('desk.bill.billed')}
            </th>
            <th scope="col" class="n">
              {t('desk.bill.shadow')}
            </th>
            <th scope="col" class="n">
              {t('desk.bill.difference')}
            </th>
            <th scope="col">{t('desk.bill.result')}</th>
          </tr>
        </thead>
        <tbody>
          {check.lines.map((line) => (
            <tr key={line.line} data-check-line={line.line}>
              <th scope="row">{lineName(line.line)}</th>
              <td class="n" data-field="billed">
                {show(line.line, line.billed)}
              </td>
              <td class="n" data-field="shadow">
                {show(line.line, line.shadow)}
              </td>
              <td class="n">
                {show(line.line, line.difference)}
                {line.differencePercent !== null && <span class="muted"> ({percent(line.differencePercent / 100, true)})</span>}
              </td>
              <td class={line.flagged ? 'bad' : 'good'} data-field="flag">
                {t(line.flagged ? 'desk.bill.lineFlagged' : 'desk.bill.lineOk')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function BillForm({ meters, onEntered }: { meters: Got<'/api/meters'>['items']; onEntered: (check: Check) => void }) {
  const [form, setForm] = useState({ meterId: meters[0]?.id ?? 0, from: '', last: '', reference: '', billedKw: '', standing: '', total: '' });
  const [bands, setBands] = useState([{ name: 'base', kwh: '' }]);
  const [problem, setProblem] = useState<string | null>(null);
  async function enter(event: Event) {
    event.preventDefault();
    if (!form.from || !form.last) return setProblem(t('desk.period.needDays'));
    const quantities = bands.filter((b) => b.name.trim() || b.kwh.trim()).map((b) => ({ name: b.name.trim(), kwh: decimal(b.kwh) }));
    if (quantities.some((b) => !b.name || !Number.isFinite(b.kwh) || b.kwh < 0)) return setProblem(t('desk.bill.badBand'));
    const total = decimal(form.total);
    if (!Number.isFinite(total)) return setProblem(t('desk.bill.needTotal'));
    const optional = (text: string) => (text.trim() === '' ? undefined : decimal(text));
    const billedKw = optional(form.billedKw);
    const standing = optional(form.standing);
    if ([billedKw, standing].some((v) => v !== undefined && (!Number.isFinite(v) || v < 0))) return setProblem(t('desk.bill.badNumber'));
    const { data, error, response } = await api.POST('/api/billing/supplier-bills', {
      body: {
        meterId: Number(form.meterId),
        from: form.from,
        to: nextDay(form.last),
        ...(form.reference.trim() ? { reference: form.reference.trim() } : {}),
        bands: Object.fromEntries(quantities.map((b) => [b.name, b.kwh])),
        ...(billedKw !== undefined ? { billedKw } : {}),
        ...(standing !== undefined ? { standingCharges: standing } : {}),
        total,
      },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onEntered(data);
  }
  return (
    <form class="card stack" onSubmit={enter} noValidate aria-labelledby="enter-bill-heading">
      <h2 id="enter-bill-heading">{t('desk.bill.enter')}</h2>
      <Problem text={problem} />
      <Field label={t('desk.bill.supply')}>
        {(id) => (
          <select id={id} value={form.meterId} onChange={(e) => setForm({ ...form, meterId: Number(e.currentTarget.value) })}>
            {meters.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('desk.period.from')}>
        {(id) => <input id={id} type="date" value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.period.last')}>
        {(id) => <input id={id} type="date" value={form.last} onInput={(e) => setForm({ ...form, last: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.bill.reference')}>
        {(id) => <input id={id} value={form.reference} onInput={(e) => setForm({ ...form, reference: e.currentTarget.value })} />}
      </Field>
      <fieldset class="stack">
        <legend>{t('desk.bill.bands')}</legend>
        {bands.map((band, i) => (
          <div class="band-row" key={i}>
            <input
              aria-label={t('desk.bill.bandName', { n: i + 1 })}
              size={10}
              value={band.name}
              onInput={(e) => setBands(bands.map((b, j) => (j === i ? { ...b, name: e.currentTarget.value } : b)))}
            />
            <input
              aria-label={t('desk.bill.bandKwh', { n: i + 1 })}
              inputMode="decimal"
              size={10}
              value={band.kwh}
              onInput={(e) => setBands(bands.map((b, j) => (j === i ? { ...b, kwh: e.currentTarget.value } : b)))}
            />
            <span class="muted">kWh</span>
          </div>
        ))}
        <button type="button" class="ghost" onClick={() => setBands([...bands, { name: '', kwh: '' }])}>
          {t('desk.bill.addBand')}
        </button>
      </fieldset>
      <Field label={t('desk.bill.billedKw')}>
        {(id) => <input id={id} inputMode="decimal" value={form.billedKw} onInput={(e) => setForm({ ...form, billedKw: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.bill.standingIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.standing} onInput={(e) => setForm({ ...form, standing: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.bill.totalIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.total} onInput={(e) => setForm({ ...form, total: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.bill.enterButton')}</button>
    </form>
  );
}

function ListedBill({ bill, meterName }: { bill: Got<'/api/billing/supplier-bills'>['items'][number]; meterName: string }) {
  const [check, setCheck] = useState<Check | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  async function open() {
    const { data, error, response } = await api.GET('/api/billing/supplier-bills/{id}/check', { params: { path: { id: bill.id } } });
    if (!data) return setProblem(errorText(error, response.status));
    setCheck(data);
  }
  return (
    <li class="alert" data-bill={bill.id}>
      <div class="row">
        <strong>{bill.reference || `#${bill.id}`}</strong>
        <span>{meterName}</span>
        <span class="muted">
          {bill.from} – {lastDay(bill.to)}
        </span>
        <span class="n">{cents(bill.total, siteCurrency)}</span>
        {!check && (
          <button type="button" class="link when" onClick={open}>
            {t('desk.bill.showCheck', { reference: bill.reference || `#${bill.id}` })}
          </button>
        )}
      </div>
      <Problem text={problem} />
      {check && <CheckResult check={check} />}
    </li>
  );
}

/** Bills from a CSV file (POST …/supplier-bills/import): every row checked first; a bad row refuses the file, naming it, and nothing is written. */
function ImportForm({ onImported }: { onImported: (checks: Check[]) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  async function send(event: Event) {
    event.preventDefault();
    if (!file) return setProblem(t('desk.import.needFile'));
    const text = await file.text();
    const { data, error, response } = await api.POST('/api/billing/supplier-bills/import', {
      body: text,
      bodySerializer: (body: string) => body,
      headers: { 'content-type': 'text/csv' },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onImported(data.items);
  }
  return (
    <form class="card stack" onSubmit={send} noValidate aria-labelledby="import-heading">
      <h2 id="import-heading">{t('desk.import.title')}</h2>
      <p class="muted">{t('desk.import.intro')}</p>
      <Problem text={problem} />
      <Field label={t('desk.import.file')}>
        {(id) => <input id={id} type="file" accept=".csv,text/csv" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />}
      </Field>
      <button type="submit">{t('desk.import.send')}</button>
    </form>
  );
}

export default function DeskSupplierBills() {
  const bills = useApi(() => api.GET('/api/billing/supplier-bills'));
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const [latest, setLatest] = useState<Check[]>([]);
  const supplies = (meters.data?.items ?? []).filter((m) => m.site);
  const name = (id: number) => meters.data?.items.find((m) => m.id === id)?.name ?? `#${id}`;
  return (
    <section class="analysis desk">
      <h1>{t('desk.bills.title')}</h1>
      <DeskLinks here="/billing/supplier-bills" />
      <Problem text={bills.problem ?? meters.problem} />
      <Done
        text={
          latest.length === 0
            ? null
            : latest.length > 1
              ? t('desk.import.done', { n: latest.length, flagged: latest.filter((c) => c.flagged).length })
              : t(latest[0].flagged ? 'desk.bill.enteredFlagged' : 'desk.bill.enteredOk', { reference: latest[0].bill.reference || `#${latest[0].bill.id}` })
        }
      />
      {latest.map((check) => (
        <CheckResult key={check.bill.id} check={check} />
      ))}
      <div class="columns spaced">
        <section class="card" aria-labelledby="bills-heading">
          <h2 id="bills-heading">{t('desk.bills.entered')}</h2>
          {bills.data && bills.data.items.length === 0 && <p class="muted">{t('desk.bills.none')}</p>}
          <ul class="worklist">
            {(bills.data?.items ?? []).map((bill) => (
              <ListedBill key={bill.id} bill={bill} meterName={name(bill.meterId)} />
            ))}
          </ul>
        </section>
        {can('operator') ? (
          meters.data &&
          (supplies.length ? (
            <div class="stack">
              <BillForm
                meters={supplies}
                onEntered={(check) => {
                  setLatest([check]);
                  bills.reload();
                }}
              />
              <ImportForm
                onImported={(checks) => {
                  setLatest(checks);
                  bills.reload();
                }}
              />
            </div>
          ) : (
            <p class="muted">{t('desk.bill.noSupply')}</p>
          ))
        ) : (
          <p class="muted">{t('desk.operatorEnters')}</p>
        )}
      </div>
    </section>
  );
}
