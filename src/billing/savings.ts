// Verified savings (IPMVP Option B on a meter or an area, Option C on the site's meters): a register of energy
// conservation measures, each with a baseline period fitted by the existing daily baseline (weather and day type) and
// held to its guard rails; avoided energy = the baseline's expectation for the reporting period (routine adjustment)
// plus non-routine adjustments − the energy measured, with its ASHRAE Guideline 14 uncertainty; avoided cost at the
// period's own average price; payback from the measure's cost.
import type { EnergyFigures } from '../energy/index.ts';
import { FSU_LIMIT, type Baselines } from '../analysis/index.ts';
import type { MeterDirectory } from '../metering/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { eq } from 'drizzle-orm';
import { savingsMeasures, type NonRoutineAdjustment } from '../platform/db/schema/index.ts';
import { BadRequest, NotFound } from '../platform/errors.ts';
import { addDays, daysBetween } from '../platform/time/calendar.ts';
import { round } from '../platform/numbers.ts';

export type MeasureInput = {
  name: string;
  description?: string;
  meterId?: number | null;
  area?: string | null;
  installedOn: string;
  cost?: number;
  baselineFrom: string;
  baselineTo: string;
  temperatureCode?: string;
  heatingBaseC?: number;
  coolingBaseC?: number;
  /** The baseline model (GET /api/analysis/baseline's method): EMS's degree-day model by default. */
  method?: 'ems' | 'caltrack-daily' | 'caltrack-hourly';
};
export type Measure = Required<MeasureInput> & { id: number; option: 'B' | 'C'; adjustments: NonRoutineAdjustment[]; createdAt: string; updatedAt: string };

/** Confidence of the stated uncertainty (IPMVP reports savings at 90 %). */
export const CONFIDENCE = 0.9;

export class Measures {
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly figures: EnergyFigures,
    private readonly baselines: Baselines,
    /** Metering's directory: a measure's meter must exist. */
    private readonly meters: Pick<MeterDirectory, 'exists'>,
  ) {
    const orm = db.orm;
    const m = savingsMeasures;
    this.sql = {
      all: { all: () => orm.select().from(m).orderBy(m.installedOn, m.id).all() },
      one: { get: (id: number) => orm.select().from(m).where(eq(m.id, id)).get() },
      insert: { run: (row: typeof m.$inferInsert) => ({ lastInsertRowid: orm.insert(m).values(row).returning({ id: m.id }).get().id }) },
      adjustments: {
        run: ({ id, adjustments }: { id: number; adjustments: NonRoutineAdjustment[] }) =>
          orm.update(m).set({ adjustments, updatedAt: new Date().toISOString() }).where(eq(m.id, id)).run(),
      },
    };
  }

  list(): Measure[] {
    return this.sql.all.all().map(view);
  }

  get(id: number): Measure {
    const row = this.sql.one.get(id);
    if (!row) throw new NotFound('Measure not found');
    return view(row);
  }

  private target(measure: Pick<MeasureInput, 'meterId' | 'area'>): { meterId?: number; area?: string } {
    if (measure.meterId !== undefined && measure.meterId !== null) return { meterId: measure.meterId };
    if (measure.area !== undefined && measure.area !== null) return { area: measure.area };
    return {};
  }

  private query(measure: Required<MeasureInput>, report?: { from: string; to: string }) {
    return {
      target: this.target(measure),
      baselineFrom: measure.baselineFrom,
      baselineTo: measure.baselineTo,
      reportFrom: report?.from,
      reportTo: report?.to,
      temperatureCode: measure.temperatureCode,
      heatingBaseC: measure.heatingBaseC,
      coolingBaseC: measure.coolingBaseC,
      holidays: [],
      method: measure.method,
    };
  }

  /**
   * Registers a measure. Refused (400) only when its baseline cannot be fitted at all (too few days, regressors that do
   * not separate); a baseline that fails the guard rails of GET /api/analysis/baseline (length, coverage, fit) is kept
   * and its savings are "not verifiable" with the reasons (issue 51 item 5): never a figure, never summed.
   */
  async create(input: MeasureInput, actor: Actor): Promise<Measure & { baseline: { verifiable: boolean; reasons: string[] } }> {
    const measure: Required<MeasureInput> = {
      description: '',
      meterId: null,
      area: null,
      cost: 0,
      temperatureCode: 'temp.outdoor',
      heatingBaseC: 15.5,
      coolingBaseC: 21,
      method: 'ems',
      ...input,
    };
    const details: { path: string; message: string }[] = [];
    if (measure.meterId !== null && measure.area !== null)
      details.push({ path: 'body.area', message: 'give meterId or area (or neither: the site), not both' });
    if (measure.meterId !== null && !this.meters.exists(measure.meterId)) details.push({ path: 'body.meterId', message: `no meter ${measure.meterId}` });
    if (measure.area !== null && !this.figures.areaNames().includes(measure.area))
      details.push({ path: 'body.area', message: `no meter counts towards area ${measure.area}` });
    if (measure.baselineTo > measure.installedOn)
      details.push({ path: 'body.baselineTo', message: 'the baseline period ends before the measure is installed' });
    if (details.length) throw new BadRequest('Invalid measure', details);
    const fit = await this.baselines.fit(this.query(measure));
    const id = this.db.sqlite.transaction(() => {
      const target = measure.meterId !== null ? 'meter' : measure.area !== null ? 'area' : 'site';
      const { lastInsertRowid } = this.sql.insert.run({ ...measure, target });
      const created = Number(lastInsertRowid);
      this.audit.record({ actor, action: 'create', resource: 'savings_measures', resourceId: created, after: measure });
      return created;
    })();
    return { ...this.get(id), baseline: { verifiable: fit.guardRails.defensible, reasons: fit.guardRails.reasons } };
  }

  addAdjustment(id: number, adjustment: NonRoutineAdjustment, actor: Actor): Measure {
    if (adjustment.to <= adjustment.from) throw new BadRequest('Invalid adjustment', [{ path: 'body.to', message: 'must be after from' }]);
    return this.db.sqlite.transaction(() => {
      const measure = this.get(id);
      if (adjustment.from < measure.baselineTo)
        throw new BadRequest('Invalid adjustment', [
          { path: 'body.from', message: 'a non-routine adjustment applies to the reporting period, after the baseline' },
        ]);
      const adjustments = [...measure.adjustments, adjustment];
      this.sql.adjustments.run({ id, adjustments });
      this.audit.record({ actor, action: 'adjust', resource: 'savings_measures', resourceId: id, after: adjustment });
      return this.get(id);
    })();
  }

  /**
   * The measure's savings over [from, to) (default: from its installation to today), by the one savings engine: the
   * figure, the guard rails and the uncertainty of GET /api/analysis/baseline for the same model and period (issue 51
   * item 5). The baseline's expectation for the reporting days with data (routine adjustment by the model's weather and
   * day type), the non-routine adjustments (each prorated by the days it shares with the period), what was measured;
   * the avoided energy only when the guard rails hold (`verifiable`; else null with the reasons), its uncertainty at
   * 90 % as G14 Annex B with the lag-1 autocorrelation of the baseline's residuals, `significant` when the fractional
   * savings uncertainty is at most 50 % at 68 %; the avoided cost at the period's average price, and the payback.
   */
  async savings(id: number, period: { from?: string; to?: string } = {}) {
    const measure = this.get(id);
    const row = this.sql.one.get(id)!;
    if (row.target === 'meter' && row.meterId === null)
      throw new BadRequest("The measure's meter was deleted: its savings can no longer be measured", [{ path: 'measure.meterId', message: 'meter deleted' }]);
    const from = period.from ?? [measure.installedOn, measure.baselineTo].sort()[1];
    const to = period.to ?? addDays(this.figures.today(), 1);
    const fit = await this.baselines.fit(this.query(measure, { from, to }));
    const report = fit.report!;
    const days = report.days.length;
    const nonRoutineKwh = measure.adjustments.reduce((sum, adjustment) => {
      const start = [adjustment.from, from].sort()[1];
      const end = [adjustment.to, to].sort()[0];
      if (end <= start) return sum;
      return sum + (adjustment.kwh * daysBetween(start, end).length) / daysBetween(adjustment.from, adjustment.to).length;
    }, 0);
    const adjustedBaselineKwh = report.expectedKwh + nonRoutineKwh;
    const impliedKwh = adjustedBaselineKwh - report.actualKwh;
    const { guardRails } = fit;
    const verifiable = guardRails.defensible && days > 0;
    const uncertainty = guardRails.uncertainty;
    const uncertaintyKwh = uncertainty ? uncertainty.at90.kwh : 0;
    // G14: the savings exceed their uncertainty when the fractional savings uncertainty at 68 % is at most 50 %.
    const significant = uncertainty !== null && impliedKwh !== 0 && uncertainty.at68.kwh / Math.abs(impliedKwh) <= FSU_LIMIT;
    const reasons = guardRails.reasons.filter((reason) => !reason.startsWith('The savings ('));
    if (verifiable && !significant)
      reasons.push(
        `The savings (${round(impliedKwh, 1)} kWh) are within ±${uncertainty?.at68.kwh ?? 0} kWh at 68 % confidence: Guideline 14 asks the uncertainty to be at most 50 % of the savings, ` +
          'so no saving (or over-consumption) is demonstrated.',
      );
    const avoidedKwh = verifiable ? impliedKwh : null;
    // The period's own average price, from the target's meters (energy only, no standing charge).
    let kwh = 0;
    let cost = 0;
    for (const meterId of this.figures.ids(this.target(measure))) {
      const totals = this.figures.totals(from, to, { meterId });
      kwh += totals.kwh;
      cost += totals.cost;
    }
    const price = kwh > 0 ? cost / kwh : 0;
    const avoidedCost = avoidedKwh === null ? null : avoidedKwh * price;
    const yearlyCost = avoidedCost !== null && days > 0 ? (avoidedCost * 365) / days : 0;
    // Reporting days whose weather the baseline never saw: the model extrapolates there, which its uncertainty does not cover.
    const span = (values: number[]) => [Math.min(...values), Math.max(...values)];
    const [hddLow, hddHigh] = span(fit.baselineDays.map((day) => day.hdd));
    const [cddLow, cddHigh] = span(fit.baselineDays.map((day) => day.cdd));
    const outside = report.days.filter((day) => day.hdd < hddLow || day.hdd > hddHigh || day.cdd < cddLow || day.cdd > cddHigh).length;
    return {
      measure,
      option: measure.option,
      baseline: { from: measure.baselineFrom, to: measure.baselineTo, statistics: fit.statistics, model: fit.model },
      guardRails: { checks: guardRails.checks, uncertainty },
      report: {
        from,
        to,
        days,
        missingDays: report.missingDays.length,
        partialDays: report.partialDays.length,
        daysOutsideBaselineConditions: outside,
        expectedKwh: round(report.expectedKwh, 3),
        nonRoutineKwh: round(nonRoutineKwh, 3),
        adjustedBaselineKwh: round(adjustedBaselineKwh, 3),
        actualKwh: round(report.actualKwh, 3),
        verifiable,
        significant: verifiable ? significant : null,
        reasons,
        avoidedKwh: avoidedKwh === null ? null : round(avoidedKwh, 3),
        uncertaintyKwh: round(uncertaintyKwh, 3),
        confidence: CONFIDENCE,
        relativePrecisionPercent: avoidedKwh ? round((uncertaintyKwh / Math.abs(avoidedKwh)) * 100, 2) : null,
        pricePerKwh: round(price, 5),
        avoidedCost: avoidedCost === null ? null : round(avoidedCost, 2),
        uncertaintyCost: round(uncertaintyKwh * price, 2),
        paybackYears: yearlyCost > 0 ? round(measure.cost / yearlyCost, 2) : null,
      },
    };
  }
}

/**
 * The site's savings report: every measure's savings over its period (or the one given). The total counts only
 * verifiable, significant savings (uncertainties in quadrature); the others are listed apart with their bands: not
 * significant (a figure inside its own uncertainty), not verifiable (the guard rails withhold it, with the reasons), or
 * not evaluated (an error, e.g. the meter deleted).
 */
export async function siteSavings(measures: Measures, period: { from?: string; to?: string }) {
  type Status = 'significant' | 'not significant' | 'not verifiable' | 'not evaluated';
  type Item = {
    id: number;
    name: string;
    option: 'B' | 'C';
    status: Status;
    counted: boolean;
    from: string | null;
    to: string | null;
    avoidedKwh: number | null;
    uncertaintyKwh: number | null;
    avoidedCost: number | null;
    uncertaintyCost: number | null;
    paybackYears: number | null;
    reasons: string[];
    error: string | null;
  };
  const items: Item[] = [];
  for (const measure of measures.list()) {
    try {
      const { report } = await measures.savings(measure.id, period);
      const status: Status = !report.verifiable ? 'not verifiable' : report.significant ? 'significant' : 'not significant';
      items.push({
        id: measure.id,
        name: measure.name,
        option: measure.option,
        status,
        counted: status === 'significant',
        from: report.from,
        to: report.to,
        avoidedKwh: report.avoidedKwh,
        uncertaintyKwh: report.uncertaintyKwh,
        avoidedCost: report.avoidedCost,
        uncertaintyCost: report.uncertaintyCost,
        paybackYears: report.paybackYears,
        reasons: report.reasons,
        error: null,
      });
    } catch (error) {
      // A measure that cannot be evaluated now (its meter gone, too few days) is listed with the reason, not summed.
      if (!(error instanceof BadRequest)) throw error;
      const reason = error.details?.map((detail) => detail.message).join('; ') || error.message;
      items.push({
        id: measure.id,
        name: measure.name,
        option: measure.option,
        status: 'not evaluated',
        counted: false,
        from: null,
        to: null,
        avoidedKwh: null,
        uncertaintyKwh: null,
        avoidedCost: null,
        uncertaintyCost: null,
        paybackYears: null,
        reasons: [reason],
        error: reason,
      });
    }
  }
  const counted = items.filter((item) => item.counted);
  const sum = (pick: (item: (typeof counted)[number]) => number) => counted.reduce((total, item) => total + pick(item), 0);
  // Independent errors add in quadrature.
  const quadrature = (pick: (item: (typeof counted)[number]) => number) => Math.sqrt(sum((item) => pick(item) ** 2));
  const count = (status: Status) => items.filter((item) => item.status === status).length;
  return {
    items,
    total: {
      measures: counted.length,
      avoidedKwh: round(
        sum((item) => item.avoidedKwh!),
        3,
      ),
      uncertaintyKwh: round(
        quadrature((item) => item.uncertaintyKwh!),
        3,
      ),
      avoidedCost: round(
        sum((item) => item.avoidedCost!),
        2,
      ),
      uncertaintyCost: round(
        quadrature((item) => item.uncertaintyCost!),
        2,
      ),
      confidence: CONFIDENCE,
    },
    apart: { notSignificant: count('not significant'), notVerifiable: count('not verifiable'), notEvaluated: count('not evaluated') },
  };
}

function view(row: typeof savingsMeasures.$inferSelect): Measure {
  const { target, ...rest } = row;
  return { ...rest, option: target === 'site' ? 'C' : 'B' };
}
