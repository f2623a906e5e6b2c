// Supplier bills per supply point (a site meter), entered or imported as CSV, each checked against the shadow bill EMS
// works out from its own intervals and dated tariffs: a line further from it than the site's tolerance is flagged.
import type { CalorificValues, Tariffs } from '../pricing/index.ts';
import type { DemandCharges } from '../analysis/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { desc, eq } from 'drizzle-orm';
import { supplierBills, SUPPLIER_BILL_LINE_KINDS, type SupplierBillLine } from '../platform/db/schema/index.ts';
import { BadRequest, NotFound } from '../platform/errors.ts';
import { daysBetween } from '../platform/time/calendar.ts';
import type { BilledMeter } from './bill.ts';
import type { BillingCalculation } from './calculation.ts';
import { BillAudit, type AuditItem, type AuditTolerances } from './billAudit.ts';
import { round } from '../platform/numbers.ts';

export type SupplierBillInput = {
  meterId: number;
  from: string;
  to: string;
  reference?: string;
  /** Quantity per time-of-use band as billed, in kWh (gas too: the bill's kWh); absent: summed from the energy lines. */
  bands?: Record<string, number>;
  billedKw?: number | null;
  standingCharges?: number;
  total: number;
  calorificValue?: number | null;
  /** The bill's lines as printed (issue 51). */
  lines?: SupplierBillLine[];
  startReading?: number | null;
  endReading?: number | null;
};
export type SupplierBill = Required<SupplierBillInput> & { id: number; createdAt: string; createdBy: string | null };
export type CheckLine = {
  line: string;
  billed: number | null;
  shadow: number | null;
  difference: number | null;
  differencePercent: number | null;
  flagged: boolean;
};
export type BillCheck = {
  bill: SupplierBill;
  tolerancePercent: number;
  flagged: boolean;
  lines: CheckLine[];
  missingIntervals: number;
  /** Every check of the line-by-line audit (issue 51), flagged or not. */
  audit: AuditItem[];
  /** The audit's flagged checks. */
  findings: AuditItem[];
};
export type BillRules = { tolerancePercent: number; audit: AuditTolerances };

const MAX_ROWS = 1000;
/** Beyond any plausible bill: a quantity, rate or amount above this is a typing error, refused naming the field. */
export const MAX_FIGURE = 1e9;
const MAX_LINES = 200;
/** A CSV of printed lines: the columns of a line (one row each); the others are its bill's. */
const CSV_LINE_COLUMNS = ['kind', 'band', 'description', 'lineFrom', 'lineTo', 'quantity', 'rate', 'amount'] as const;
/** A line field's CSV column where the names differ. */
const CSV_NAME: Record<string, string> = { from: 'lineFrom', to: 'lineTo' };
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export class SupplierBills {
  private readonly sql;
  private readonly auditor: BillAudit;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly calculation: BillingCalculation,
    private readonly tariffs: Tariffs,
    private readonly demandCharges: DemandCharges,
    private readonly calorific: Pick<CalorificValues, 'kwhPerM3'>,
    private readonly rules: () => BillRules,
  ) {
    this.auditor = new BillAudit(calculation, tariffs, demandCharges, (days) => calorific.kwhPerM3(days));
    const orm = db.orm;
    this.sql = {
      insert: {
        run: (row: typeof supplierBills.$inferInsert) => ({
          lastInsertRowid: orm.insert(supplierBills).values(row).returning({ id: supplierBills.id }).get().id,
        }),
      },
      one: { get: (id: number) => orm.select().from(supplierBills).where(eq(supplierBills.id, id)).get() },
      all: { all: () => orm.select().from(supplierBills).orderBy(desc(supplierBills.fromDay), desc(supplierBills.id)).limit(500).all() },
      ofMeter: { all: (meterId: number) => orm.select().from(supplierBills).where(eq(supplierBills.meterId, meterId)).all() },
    };
  }

  list(): SupplierBill[] {
    return this.sql.all.all().map(view);
  }

  get(id: number): SupplierBill {
    const row = this.sql.one.get(id);
    if (!row) throw new NotFound('Supplier bill not found');
    return view(row);
  }

  /** What is wrong with a bill, as messages (empty: fine); `at` prefixes each path (body, or the CSV line). */
  private problems(input: SupplierBillInput, at: string): { path: string; message: string }[] {
    const out: { path: string; message: string }[] = [];
    const isDay = (value: string) => DAY.test(value) && !Number.isNaN(Date.parse(value));
    if (!isDay(input.from)) out.push({ path: `${at}.from`, message: 'must be a day YYYY-MM-DD' });
    if (!isDay(input.to)) out.push({ path: `${at}.to`, message: 'must be a day YYYY-MM-DD' });
    else if (isDay(input.from) && input.to <= input.from) out.push({ path: `${at}.to`, message: 'must be after from (the first day after the bill period)' });
    else if (isDay(input.from) && daysBetween(input.from, input.to).length > 366) out.push({ path: `${at}.to`, message: 'a bill covers at most 366 days' });
    const meter = this.calculation.billedMeter(input.meterId);
    if (!meter) out.push({ path: `${at}.meterId`, message: `no meter ${input.meterId}` });
    else if (meter.role !== 'import') out.push({ path: `${at}.meterId`, message: `${meter.name} is not a supply point (it is an ${meter.role} meter)` });
    const figure = (path: string, value: number | null | undefined, least: number | null) => {
      if (value === null || value === undefined) return;
      if (!Number.isFinite(value)) out.push({ path, message: 'must be a number' });
      else if (least !== null && value < least) out.push({ path, message: `must be at least ${least}` });
      else if (Math.abs(value) > MAX_FIGURE) out.push({ path, message: `must be at most ${MAX_FIGURE} in size: beyond any plausible bill` });
    };
    for (const [name, value] of Object.entries(input.bands ?? {})) figure(`${at}.bands.${name}`, value, 0);
    figure(`${at}.total`, input.total, null);
    figure(`${at}.billedKw`, input.billedKw, 0);
    figure(`${at}.standingCharges`, input.standingCharges, 0);
    figure(`${at}.startReading`, input.startReading, 0);
    figure(`${at}.endReading`, input.endReading, 0);
    if (input.startReading != null && input.endReading != null && input.endReading < input.startReading)
      out.push({ path: `${at}.endReading`, message: 'must be at least the start reading' });
    const lines = input.lines ?? [];
    if (lines.length > MAX_LINES) out.push({ path: `${at}.lines`, message: `at most ${MAX_LINES} lines` });
    lines.forEach((line, index) => {
      const path = `${at}.lines.${index}`;
      if (!SUPPLIER_BILL_LINE_KINDS.includes(line.kind)) out.push({ path: `${path}.kind`, message: `must be one of: ${SUPPLIER_BILL_LINE_KINDS.join(', ')}` });
      figure(`${path}.quantity`, line.quantity, 0);
      figure(`${path}.rate`, line.rate, 0);
      // Only an adjustment (a credit) may take money off.
      figure(`${path}.amount`, line.amount, line.kind === 'adjustment' ? null : 0);
      if (line.band !== undefined && line.kind !== 'energy') out.push({ path: `${path}.band`, message: 'only an energy line has a band' });
      for (const end of ['from', 'to'] as const) {
        const day = line[end];
        if (day === undefined) continue;
        if (!isDay(day)) out.push({ path: `${path}.${end}`, message: 'must be a day YYYY-MM-DD' });
        else if (isDay(input.from) && isDay(input.to) && (day < input.from || day > input.to))
          out.push({ path: `${path}.${end}`, message: `must lie within the bill (${input.from} – ${input.to})` });
      }
      const from = line.from ?? input.from;
      const to = line.to ?? input.to;
      if (isDay(from) && isDay(to) && to <= from) out.push({ path: `${path}.to`, message: 'must be after from' });
    });
    return out;
  }

  create(input: SupplierBillInput, actor: Actor): BillCheck {
    const problems = this.problems(input, 'body');
    if (problems.length) throw new BadRequest('Invalid supplier bill', problems);
    const id = this.db.sqlite.transaction(() => this.insert(withDerived(input), actor))();
    return this.check(id);
  }

  /**
   * Imports a CSV. Summary form (header: meterId,from,to,total and optionally reference,billedKw,standingCharges,
   * calorificValue,startReading,endReading and a kwh:<band> column per band): one bill per row. Lines form (a `kind`
   * column, issue 51): one printed line per row (kind,band,description,lineFrom,lineTo,quantity,rate,amount) grouped
   * into bills by `reference`; the bill's own fields are given on its first row and, where repeated, must agree.
   * Every row is checked first; any bad row refuses the file naming its lines, and nothing is written.
   */
  importCsv(text: string, actor: Actor): BillCheck[] {
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
    const { header, byLine } = csvHeader(lines[0] ?? '');
    const problems: { path: string; message: string }[] = [];
    const rows = this.csvRows(lines, header, byLine, problems);
    const bills = byLine ? this.billsOfLines(rows, header, problems) : rows.map((row) => ({ input: row.bill, at: row.at, rowOfLine: [] as string[] }));
    if (problems.length) refuseBadRows(problems);
    if (!bills.length) throw new BadRequest('The CSV has no bills', [{ path: 'line 2', message: 'no rows after the header' }]);
    if (bills.length > MAX_ROWS) throw new BadRequest(`At most ${MAX_ROWS} bills per file`);
    const ids = this.db.sqlite.transaction(() => bills.map((bill) => this.insert(withDerived(bill.input), actor)))();
    return ids.map((id) => this.check(id));
  }

  /** The CSV's rows after the header, each read into a bill (and in a file of lines, its printed line); bad fields go to `problems`. */
  private csvRows(lines: string[], header: string[], byLine: boolean, problems: { path: string; message: string }[]): CsvRow[] {
    const rows: CsvRow[] = [];
    lines.slice(1).forEach((line, index) => {
      if (!line.trim()) return;
      const at = `line ${index + 2}`;
      const cells = splitCsv(line);
      if (cells.length !== header.length) {
        problems.push({ path: at, message: `has ${cells.length} fields, the header ${header.length}` });
        return;
      }
      const field = (name: string) => cells[header.indexOf(name)]?.trim() ?? '';
      const number = (name: string, optional: boolean): number | null => {
        const raw = field(name);
        if (raw === '' && optional) return null;
        const value = Number(raw);
        if (raw === '' || !Number.isFinite(value)) {
          problems.push({ path: `${at}.${name}`, message: `"${raw}" is not a number` });
          return null;
        }
        return value;
      };
      // In a file of lines, a bill's fields may be left empty on all but its first row.
      const later = byLine && rows.some((row) => row.raw.reference === field('reference'));
      const bands: Record<string, number> = {};
      for (const name of header.filter((h) => h.startsWith('kwh:'))) {
        const value = number(name, true);
        if (value !== null) bands[name.slice(4)] = value;
      }
      const meterId = number('meterId', later);
      const bill: SupplierBillInput = {
        meterId: meterId ?? 0,
        from: field('from'),
        to: field('to'),
        reference: header.includes('reference') ? field('reference') : '',
        bands,
        billedKw: header.includes('billedKw') ? number('billedKw', true) : null,
        // A file of lines without the figure: the standing lines' sum (withDerived).
        standingCharges: (header.includes('standingCharges') ? number('standingCharges', true) : null) ?? (byLine ? undefined : 0),
        total: number('total', later) ?? Number.NaN,
        calorificValue: header.includes('calorificValue') ? number('calorificValue', true) : null,
        startReading: header.includes('startReading') ? number('startReading', true) : null,
        endReading: header.includes('endReading') ? number('endReading', true) : null,
      };
      const raw = Object.fromEntries(header.map((name) => [name, field(name)]));
      if (!byLine) {
        if (meterId !== null) problems.push(...this.problems(bill, at));
        rows.push({ at, bill, raw, line: null });
        return;
      }
      if (!bill.reference) problems.push({ path: `${at}.reference`, message: "a printed line names its bill's invoice number" });
      const kind = field('kind') as SupplierBillLine['kind'];
      if (!SUPPLIER_BILL_LINE_KINDS.includes(kind))
        problems.push({ path: `${at}.kind`, message: `"${kind}" is not one of: ${SUPPLIER_BILL_LINE_KINDS.join(', ')}` });
      const printed: SupplierBillLine = { kind, amount: number('amount', false) ?? Number.NaN };
      const text = (name: 'band' | 'description' | 'lineFrom' | 'lineTo') => (header.includes(name) ? field(name) : '');
      if (text('band')) printed.band = text('band');
      if (text('description')) printed.description = text('description');
      if (text('lineFrom')) printed.from = text('lineFrom');
      if (text('lineTo')) printed.to = text('lineTo');
      for (const name of ['quantity', 'rate'] as const) {
        const value = header.includes(name) ? number(name, true) : null;
        if (value !== null) printed[name] = value;
      }
      rows.push({ at, bill, raw, line: printed });
    });
    return rows;
  }

  /** A file of lines grouped into bills by invoice number: a bill's fields agree across its rows, a line's problem names its row. */
  private billsOfLines(rows: CsvRow[], header: string[], problems: { path: string; message: string }[]) {
    const bills: { input: SupplierBillInput; at: string; rowOfLine: string[] }[] = [];
    const groups = new Map<string, CsvRow[]>();
    for (const row of rows) {
      if (!row.raw.reference) continue;
      const group = groups.get(row.raw.reference) ?? [];
      group.push(row);
      groups.set(row.raw.reference, group);
    }
    const billFields = header.filter((name) => !CSV_LINE_COLUMNS.includes(name as never) && name !== 'reference');
    for (const [reference, group] of groups) {
      const [first] = group;
      for (const row of group.slice(1))
        for (const name of billFields)
          if (row.raw[name] !== '' && row.raw[name] !== first.raw[name])
            problems.push({
              path: `${row.at}.${name}`,
              message: `"${row.raw[name]}" differs from ${first.at}, the first line of invoice ${reference} ("${first.raw[name]}"); leave it empty or repeat it`,
            });
      const input = { ...first.bill, lines: group.map((row) => row.line!) };
      const rowOfLine = group.map((row) => row.at);
      if (Number.isFinite(input.meterId) && input.meterId > 0)
        // A line's problem names its own row: "line 5.quantity", not "lines.3.quantity".
        for (const problem of this.problems(input, first.at)) {
          const match = /^line \d+\.lines\.(\d+)(\.(.+))?$/.exec(problem.path);
          const path = match ? `${rowOfLine[Number(match[1])]}${match[3] ? `.${CSV_NAME[match[3]] ?? match[3]}` : ''}` : problem.path;
          problems.push({ path, message: problem.message });
        }
      bills.push({ input, at: first.at, rowOfLine });
    }
    return bills;
  }

  private insert(input: SupplierBillInput, actor: Actor): number {
    const { lastInsertRowid } = this.sql.insert.run({
      meterId: input.meterId,
      fromDay: input.from,
      toDay: input.to,
      reference: input.reference ?? '',
      bands: input.bands ?? {},
      billedKw: input.billedKw ?? null,
      standingCharges: input.standingCharges ?? 0,
      total: input.total,
      calorificValue: input.calorificValue ?? null,
      lines: input.lines ?? [],
      startReading: input.startReading ?? null,
      endReading: input.endReading ?? null,
      createdBy: actor.username,
    });
    const id = Number(lastInsertRowid);
    this.audit.record({ actor, action: 'create', resource: 'supplier_bills', resourceId: id, after: input });
    return id;
  }

  /**
   * The bill against the shadow bill: the meter's intervals in the bill's period per band (gas converted to kWh by the
   * calorific value in force each day), the standing charges of its days, for electricity the month's billed kW and
   * its demand charge (× the period's share of the month), and the total. Each line is flagged when it differs from
   * the shadow by more than the tolerance (percent of the shadow; any difference where the shadow is 0).
   */
  check(id: number): BillCheck {
    this.tariffs.load();
    const bill = this.get(id);
    const meter = this.calculation.billedMeter(bill.meterId) as BilledMeter;
    const period = this.calculation.meterPeriod(meter, bill.from, bill.to);
    const rules = this.rules();
    const tolerancePercent = rules.tolerancePercent;
    const lines: CheckLine[] = [];
    const compare = (line: string, billed: number | null, shadow: number | null) => {
      const difference = billed === null || shadow === null ? null : round(billed - shadow, 4);
      const differencePercent = difference === null || shadow === 0 ? null : round((difference / Math.abs(shadow!)) * 100, 3);
      const flagged = difference !== null && (shadow === 0 ? Math.abs(difference) > 1e-6 : Math.abs(difference) > (Math.abs(shadow!) * tolerancePercent) / 100);
      lines.push({ line, billed, shadow: shadow === null ? null : round(shadow, 4), difference, differencePercent, flagged });
    };
    const cv = meter.commodity === 'gas' ? this.calorific.kwhPerM3(daysBetween(bill.from, bill.to)) : null;
    let gasKwh = 0;
    if (cv) for (const [day, m3] of period.byDay) gasKwh += m3 * (cv.get(day) ?? Number.NaN);
    const bands = new Set([...Object.keys(bill.bands), ...(meter.commodity === 'gas' ? [] : period.bands.keys())]);
    if (meter.commodity === 'gas') {
      const billed = Object.values(bill.bands).reduce((a, b) => a + b, 0);
      compare('kWh', billed, Number.isFinite(gasKwh) ? gasKwh : null);
      const days = [...(cv?.values() ?? [])].filter(Number.isFinite);
      if (bill.calorificValue !== null && days.length) compare('calorificValue', bill.calorificValue, days.reduce((a, b) => a + b, 0) / days.length);
    } else for (const band of bands) compare(`kWh ${band}`, bill.bands[band] ?? 0, period.bands.get(band)?.quantity ?? 0);
    const days = daysBetween(bill.from, bill.to);
    const standing = days.reduce((sum, day) => {
      const version = meter.commodity === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(meter.commodity, day);
      return sum + (version?.standingChargePerDay ?? 0);
    }, 0);
    compare('standingCharges', bill.standingCharges, standing);
    let demandCharge = 0;
    if (meter.commodity === 'electricity' && meter.site) {
      let billedKw: number | null = null;
      for (const { month, share } of this.calculation.months(bill.from, bill.to)) {
        const charge = this.demandCharges.month(month);
        demandCharge += charge.demandCharge * share;
        billedKw = Math.max(billedKw ?? 0, charge.billedKw);
      }
      if (bill.billedKw !== null) compare('billedKw', bill.billedKw, billedKw);
    }
    const energyCost = [...period.bands.values()].reduce((sum, band) => sum + band.cost, 0);
    // With printed lines, taxes and adjustments are not in EMS's shadow: the total compared is the bill's less them.
    const outside = bill.lines.filter((line) => line.kind === 'tax' || line.kind === 'adjustment').reduce((sum, line) => sum + line.amount, 0);
    compare(outside ? 'total before taxes and adjustments' : 'total', round(bill.total - outside, 6), energyCost + standing + demandCharge);
    const others = this.sql.ofMeter
      .all(bill.meterId)
      .map(view)
      .filter((other) => other.id !== bill.id);
    const audit = this.auditor.audit(bill, others, rules.audit);
    const findings = audit.filter((item) => item.flagged);
    return {
      bill,
      tolerancePercent,
      flagged: lines.some((line) => line.flagged) || findings.length > 0,
      lines,
      missingIntervals: period.missing,
      audit,
      findings,
    };
  }
}

/**
 * A bill entered by its lines gets the summary fields the shadow comparison reads from them where it does not give
 * them: kWh per band (Σ its energy lines), billed kW (its demand lines' highest), standing charges (Σ those lines).
 */
function withDerived(input: SupplierBillInput): SupplierBillInput {
  const lines = input.lines ?? [];
  const out = { ...input };
  if (input.bands === undefined || Object.keys(input.bands).length === 0) {
    const bands: Record<string, number> = {};
    for (const line of lines)
      if (line.kind === 'energy' && line.quantity !== undefined) bands[line.band ?? 'base'] = (bands[line.band ?? 'base'] ?? 0) + line.quantity;
    out.bands = bands;
  }
  const demand = lines.filter((line) => line.kind === 'demand' && line.quantity !== undefined);
  if (input.billedKw == null && demand.length) out.billedKw = Math.max(...demand.map((line) => line.quantity!));
  const standing = lines.filter((line) => line.kind === 'standing');
  if (input.standingCharges === undefined && standing.length)
    out.standingCharges = round(
      standing.reduce((sum, line) => sum + line.amount, 0),
      6,
    );
  return out;
}

function view(row: typeof supplierBills.$inferSelect): SupplierBill {
  const { fromDay, toDay, ...rest } = row;
  return { ...rest, from: fromDay, to: toDay };
}

/** The CSV's header checked: the columns its form needs, none unknown, no line columns without kind; a file of lines has a kind column. */
function csvHeader(first: string): { header: string[]; byLine: boolean } {
  const header = splitCsv(first).map((cell) => cell.trim());
  const byLine = header.includes('kind');
  const required = ['meterId', 'from', 'to', 'total', ...(byLine ? ['reference', 'amount'] : [])];
  const absent = required.filter((name) => !header.includes(name));
  if (absent.length)
    throw new BadRequest('The CSV header lacks columns', [
      { path: 'line 1', message: `missing ${absent.join(', ')}${byLine ? ' (a file of printed lines groups them by reference)' : ''}` },
    ]);
  const known = new Set([...required, 'reference', 'billedKw', 'standingCharges', 'calorificValue', 'startReading', 'endReading', ...CSV_LINE_COLUMNS]);
  const unknown = header.filter((name) => !known.has(name) && !/^kwh:.+/.test(name));
  if (unknown.length)
    throw new BadRequest('The CSV header has unknown columns', [{ path: 'line 1', message: `unknown ${unknown.join(', ')} (bands are kwh:<band>)` }]);
  const lineColumns = CSV_LINE_COLUMNS.filter((name) => name !== 'kind' && header.includes(name));
  if (!byLine && lineColumns.length)
    throw new BadRequest('The CSV header has line columns without kind', [
      { path: 'line 1', message: `${lineColumns.join(', ')} describe printed lines: add a kind column (energy, standing, demand, tax, adjustment)` },
    ]);
  return { header, byLine };
}

/** Refuses the file with its problems in the file's order, one detail per field (a line's kind is checked row by row and again with its bill). */
function refuseBadRows(problems: { path: string; message: string }[]): never {
  const row = (path: string) => Number(/^line (\d+)/.exec(path)?.[1] ?? 0);
  const seen = new Set<string>();
  const details = problems
    .filter((problem) => !seen.has(problem.path) && seen.add(problem.path))
    .sort((a, b) => row(a.path) - row(b.path))
    .slice(0, 100);
  throw new BadRequest(`The CSV has bad rows; nothing was imported`, details);
}

/** One CSV row read: where it is, the bill it gives, its cells by column, and its printed line in a file of lines. */
type CsvRow = { at: string; bill: SupplierBillInput; raw: Record<string, string>; line: SupplierBillLine | null };

/** One CSV line's fields (RFC 4180 quotes: "a,b" and "" inside quotes). */
function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      out.push(cell);
      cell = '';
    } else cell += char;
  }
  out.push(cell);
  return out;
}
