// The desk → supplier bills: an operator enters a bill for a supply point (a site meter) by its lines as printed —
// each band's quantity, unit rate and amount, standing charges, demand kW and rate, taxes, adjustments — with its total,
// and reads its line-by-line audit at once (POST /api/billing/supplier-bills answers it): per printed line the checks
// the API ran (quantity against the meters, rate against the tariff in force, amount = quantity × rate; demand against
// the intervals), each with what was expected, what was billed and the money at stake; the bill-level checks
// (duplicate, overlap, a missing month, a gap between readings, total ≠ Σ lines, use against last year) apart. A bill
// entered without printed lines (the CSV's summary form) shows its summary figures against the meters instead. Bills
// are listed with their audit (GET …/:id/check). Viewers read.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, cents, type Got, lastDay, nextDay } from '../components/deskLinks';
import { label, num, percent, siteCurrency, t } from '../i18n';
import { can } from '../state/session';

type Check = Got<'/api/billing/supplier-bills/{id}/check'>;
type Item = Check['audit'][number];
type PrintedLine = Check['bill']['lines'][number];
const KINDS = ['energy', 'standing', 'demand', 'tax', 'adjustment'] as const;

/** A summary line's name as a person reads it: "kWh peak" → "Energy, peak (kWh)". */
function lineName(line: string): string {
  if (line.startsWith('kWh ')) return t('desk.bill.lineKwh', { band: line.slice(4) });
  if (line === 'kWh') return t('desk.bill.lineGas');
  if (line === 'standingCharges') return t('desk.bill.standing');
  if (line === 'billedKw') return t('desk.bill.billedKw');
  if (line === 'total' || line.startsWith('total ')) return t('desk.bill.total');
  if (line === 'calorificValue') return t('desk.bill.calorific');
  return line;
}
const isMoney = (line: string) => line === 'standingCharges' || line.startsWith('total');

/** A figure of the audit in its unit: money to the cent, a rate per unit in the site currency, else the number and unit. */
function figure(value: number | null, unit: string): string {
  if (value === null) return '–';
  if (unit === 'money') return cents(value, siteCurrency);
  if (unit.startsWith('per ')) return `${num(value, 4)} ${siteCurrency}/${unit === 'per day' ? t('desk.audit.day') : unit.slice(4)}`;
  if (unit === 'days') return t('desk.audit.days', { n: num(value, 0) });
  return `${num(value, 2)} ${unit}`;
}

/** A printed line as the bill shows it: "2. Energy, peak — Day units". */
function printedName(line: PrintedLine, index: number): string {
  const kind = label('desk.line', line.kind);
  return `${index + 1}. ${kind}${line.band ? `, ${line.band}` : ''}${line.description ? ` — ${line.description}` : ''}`;
}

function AuditRows({ items }: { items: Item[] }) {
  return (
    <>
      {items.map((item, i) => (
        <tr key={`${item.check}-${i}`} data-audit={item.check} data-line-index={item.lineIndex ?? 'bill'} class={item.flagged ? 'flagged' : undefined}>
          <td>
            {label('desk.audit.check', item.check)}
            {item.flagged && <span class="muted"> · {item.message}</span>}
          </td>
          <td class="n" data-field="expected">
            {figure(item.expected, item.unit)}
          </td>
          <td class="n" data-field="billed">
            {figure(item.billed, item.unit)}
          </td>
          <td class="n" data-field="at-stake">
            {item.moneyAtStake === null ? '–' : cents(item.moneyAtStake, siteCurrency)}
          </td>
          <td class={item.flagged ? 'bad' : 'good'} data-field="flag">
            {t(item.flagged ? 'desk.bill.lineFlagged' : 'desk.bill.lineOk')}
          </td>
        </tr>
      ))}
    </>
  );
}

function AuditHead() {
  return (
    <thead>
      <tr>
        <th scope="col">{t('desk.audit.check')}</th>
        <th scope="col" class="n">
          {t('desk.audit.expected')}
        </th>
        <th scope="col" class="n">
          {t('desk.bill.billed')}
        </th>
        <th scope="col" class="n">
          {t('desk.audit.atStake')}
        </th>
        <th scope="col">{t('desk.bill.result')}</th>
      </tr>
    </thead>
  );
}

export function CheckResult({ check }: { check: Check }) {
  const show = (line: string, value: number | null) => (value === null ? '–' : isMoney(line) ? cents(value, siteCurrency) : num(value, 2));
  const name = check.bill.reference || `#${check.bill.id}`;
  const billLevel = check.audit.filter((item) => item.lineIndex === null);
  // A bill without printed lines is checked by its summary figures too: those beyond tolerance count as findings.
  const flagged = check.findings.length + (check.bill.lines.length ? 0 : check.lines.filter((line) => line.flagged).length);
  return (
    <section class="alert" data-check={check.bill.id} aria-labelledby={`check-${check.bill.id}`}>
      <div class="row">
        <strong id={`check-${check.bill.id}`}>{t('desk.bill.checkOf', { reference: name })}</strong>
        <span class={`badge ${check.flagged ? 'critical' : 'info'}`} data-field="verdict">
          {t(check.flagged ? 'desk.bill.flagged' : 'desk.bill.passed')}
        </span>
        <span class="muted">
          {check.bill.from} – {lastDay(check.bill.to)} · {cents(check.bill.total, siteCurrency)}
        </span>
      </div>
      <p data-field="findings" class={flagged ? 'bad' : 'muted'}>
        {flagged ? t('desk.audit.findings', { n: flagged }) : t('desk.audit.none')}
      </p>
      {check.missingIntervals > 0 && <p class="bad">{t('desk.bill.missing', { n: check.missingIntervals })}</p>}
      {check.bill.lines.length > 0 && (
        <table data-field="lines">
          <caption>{t('desk.audit.byLine', { reference: name })}</caption>
          <AuditHead />
          {check.bill.lines.map((line, index) => (
            <tbody key={index} data-printed-line={index}>
              <tr>
                <th scope="rowgroup" colSpan={5}>
                  {printedName(line, index)}
                  <span class="muted">
                    {' · '}
                    {line.quantity !== undefined && `${num(line.quantity, 2)} × `}
                    {line.rate !== undefined && `${num(line.rate, 4)} = `}
                    <span data-field="amount">{cents(line.amount, siteCurrency)}</span>
                  </span>
                </th>
              </tr>
              <AuditRows items={check.audit.filter((item) => item.lineIndex === index)} />
            </tbody>
          ))}
        </table>
      )}
      {billLevel.length > 0 && (
        <table data-field="bill-level">
          <caption>{t('desk.audit.billLevel')}</caption>
          <AuditHead />
          <tbody>
            <AuditRows items={billLevel} />
          </tbody>
        </table>
      )}
      {check.bill.lines.length === 0 && (
        <table data-field="summary">
          <caption>{t('desk.audit.summary', { pct: num(check.tolerancePercent, 1) })}</caption>
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
      )}
    </section>
  );
}

type LineForm = { kind: (typeof KINDS)[number]; band: string; description: string; quantity: string; rate: string; amount: string };
const blankLine = (kind: LineForm['kind'] = 'energy'): LineForm => ({ kind, band: '', description: '', quantity: '', rate: '', amount: '' });

/** The lines as printed, as the API takes them; or why one is refused (naming it). */
function printedLines(lines: LineForm[]): PrintedLine[] | string {
  const printed: PrintedLine[] = [];
  for (const [i, line] of lines.entries()) {
    const optional = (text: string) => (text.trim() === '' ? undefined : decimal(text));
    const amount = decimal(line.amount);
    const quantity = optional(line.quantity);
    const rate = optional(line.rate);
    if (!Number.isFinite(amount)) return t('desk.line.needAmount', { n: i + 1 });
    if ([quantity, rate].some((v) => v !== undefined && (!Number.isFinite(v) || v < 0))) return t('desk.line.badNumber', { n: i + 1 });
    printed.push({
      kind: line.kind,
      ...(line.kind === 'energy' && line.band.trim() ? { band: line.band.trim() } : {}),
      ...(line.description.trim() ? { description: line.description.trim() } : {}),
      ...(quantity !== undefined ? { quantity } : {}),
      ...(rate !== undefined ? { rate } : {}),
      amount,
    });
  }
  return printed;
}

/** One printed line: its kind, band (energy only), quantity × rate = amount, and description. */
function LineRow(props: { line: LineForm; i: number; removable: boolean; edit: (change: Partial<LineForm>) => void; onRemove: () => void }) {
  const { line, i, removable, edit, onRemove } = props;
  return (
    <div class="line-row" data-line-form={i}>
      <select aria-label={t('desk.line.kind', { n: i + 1 })} value={line.kind} onChange={(e) => edit({ kind: e.currentTarget.value as LineForm['kind'] })}>
        {KINDS.map((kind) => (
          <option key={kind} value={kind}>
            {label('desk.line', kind)}
          </option>
        ))}
      </select>
      {line.kind === 'energy' && (
        <input
          aria-label={t('desk.line.band', { n: i + 1 })}
          placeholder={t('desk.line.ph.band')}
          size={7}
          value={line.band}
          onInput={(e) => edit({ band: e.currentTarget.value })}
        />
      )}
      <input
        aria-label={t('desk.line.quantity', { n: i + 1 })}
        placeholder={t('desk.line.ph.quantity')}
        inputMode="decimal"
        size={8}
        value={line.quantity}
        onInput={(e) => edit({ quantity: e.currentTarget.value })}
      />
      <span aria-hidden="true">×</span>
      <input
        aria-label={t('desk.line.rate', { n: i + 1 })}
        placeholder={t('desk.line.ph.rate')}
        inputMode="decimal"
        size={7}
        value={line.rate}
        onInput={(e) => edit({ rate: e.currentTarget.value })}
      />
      <span aria-hidden="true">=</span>
      <input
        aria-label={t('desk.line.amount', { n: i + 1 })}
        placeholder={t('desk.line.ph.amount')}
        inputMode="decimal"
        size={8}
        value={line.amount}
        onInput={(e) => edit({ amount: e.currentTarget.value })}
      />
      <input
        class="wide"
        aria-label={t('desk.line.description', { n: i + 1 })}
        placeholder={t('desk.line.ph.description')}
        size={12}
        value={line.description}
        onInput={(e) => edit({ description: e.currentTarget.value })}
      />
      {removable && (
        <button type="button" class="ghost" onClick={onRemove}>
          {t('desk.line.remove', { n: i + 1 })}
        </button>
      )}
    </div>
  );
}

function BillForm({ meters, onEntered }: { meters: Got<'/api/meters'>['items']; onEntered: (check: Check) => void }) {
  const [form, setForm] = useState({ meterId: meters[0]?.id ?? 0, from: '', last: '', reference: '', total: '', startReading: '', endReading: '' });
  const [lines, setLines] = useState<LineForm[]>([blankLine('energy'), blankLine('standing')]);
  const [problem, setProblem] = useState<string | null>(null);
  const edit = (i: number, change: Partial<LineForm>) => setLines(lines.map((line, j) => (j === i ? { ...line, ...change } : line)));
  async function enter(event: Event) {
    event.preventDefault();
    if (!form.from || !form.last) return setProblem(t('desk.period.needDays'));
    const printed = printedLines(lines);
    if (typeof printed === 'string') return setProblem(printed);
    if (!printed.length) return setProblem(t('desk.line.none'));
    const total = decimal(form.total);
    if (!Number.isFinite(total)) return setProblem(t('desk.bill.needTotal'));
    const reading = (text: string) => (text.trim() === '' ? undefined : decimal(text));
    const startReading = reading(form.startReading);
    const endReading = reading(form.endReading);
    if ([startReading, endReading].some((v) => v !== undefined && (!Number.isFinite(v) || v < 0))) return setProblem(t('desk.bill.badReading'));
    const { data, error, response } = await api.POST('/api/billing/supplier-bills', {
      body: {
        meterId: Number(form.meterId),
        from: form.from,
        to: nextDay(form.last),
        ...(form.reference.trim() ? { reference: form.reference.trim() } : {}),
        lines: printed,
        total,
        ...(startReading !== undefined ? { startReading } : {}),
        ...(endReading !== undefined ? { endReading } : {}),
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
        <legend>{t('desk.line.legend')}</legend>
        <p class="muted">{t('desk.line.intro', { currency: siteCurrency })}</p>
        {lines.map((line, i) => (
          <LineRow
            key={i}
            line={line}
            i={i}
            removable={lines.length > 1}
            edit={(change) => edit(i, change)}
            onRemove={() => setLines(lines.filter((_, j) => j !== i))}
          />
        ))}
        <button type="button" class="ghost" onClick={() => setLines([...lines, blankLine()])}>
          {t('desk.line.add')}
        </button>
      </fieldset>
      <Field label={t('desk.bill.totalIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.total} onInput={(e) => setForm({ ...form, total: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.bill.startReading')}>
        {(id) => <input id={id} inputMode="decimal" value={form.startReading} onInput={(e) => setForm({ ...form, startReading: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.bill.endReading')}>
        {(id) => <input id={id} inputMode="decimal" value={form.endReading} onInput={(e) => setForm({ ...form, endReading: e.currentTarget.value })} />}
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
