// `npm run bench:mv`: EMS's fit statistics and savings beside the reference methods' on the real buildings of
// test/analysis/data (README there: provenance and licence), through the API of an in-process service whose gateway
// serves the real temperatures. For each data set: EMS daily (degree days + weekend), EMS hourly (hour of the week),
// CalTRACK daily, CalTRACK hourly (time of week and temperature), and an independent change-point fit written in the
// test helpers (not EMS's code). Times: each fit's wall time after the temperatures are kept, and its ratio to EMS
// daily's in the same run (the baseline).
import { annexBUncertainty, changePointFit, dailyMeanC, energyHours, readHourly, realRig, wholeDaySums } from '../helpers/realBuildings.ts';

const CASES = [
  { name: 'b0, 2018 → 2019 (unchanged)', file: 'cambridge-b0-2018-2019.csv.gz', from: '2018-01-01', baseline: ['2018-01-01', '2019-01-01'] },
  { name: 'b52, 2017 → 2019 (a change of operation)', file: 'cambridge-b52-2017-2019.csv.gz', from: '2017-01-01', baseline: ['2017-01-01', '2018-01-01'] },
] as const;
const REPORT = ['2019-01-01', '2020-01-01'] as const;
const METHODS = [
  { label: 'EMS daily', path: '/api/analysis/baseline', extra: {} },
  { label: 'EMS hourly (hour-of-week)', path: '/api/analysis/baseline/hourly', extra: { by: 'hour-of-week' } },
  { label: 'CalTRACK daily', path: '/api/analysis/baseline', extra: { method: 'caltrack-daily' } },
  { label: 'CalTRACK hourly', path: '/api/analysis/baseline', extra: { method: 'caltrack-hourly' } },
] as const;

const pct = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || !Number.isFinite(value) ? '—' : `${value.toFixed(digits)}`;

const temperatures = readHourly('bedford-2017-2019.csv.gz');
const meanC = dailyMeanC(temperatures);
const r = await realRig();
try {
  r.temperatures('temp.outdoor', temperatures);
  console.log(
    '| data set | method | n | CV(RMSE) % | NMBE % | R² | savings % of expected | ± 90 % (% of expected) | significant | withheld | fit ms | × EMS daily |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const c of CASES) {
    const hours = energyHours(c.file);
    const meterId = await r.building(c.name, hours, c.from, '2020-01-01');
    const query = (extra: Record<string, string>) =>
      new URLSearchParams({
        meterId: String(meterId),
        baselineFrom: c.baseline[0],
        baselineTo: c.baseline[1],
        reportFrom: REPORT[0],
        reportTo: REPORT[1],
        ...extra,
      });
    // Keep the temperatures first, so that no fit below pays for reading them from the gateway.
    await r.get(`/api/analysis/baseline?${query({})}`);
    let emsMs = 0;
    for (const m of METHODS) {
      const started = performance.now();
      const body = await r.get(`${m.path}?${query(m.extra)}`);
      const ms = performance.now() - started;
      if (m.label === 'EMS daily') emsMs = ms;
      const report = body.report;
      const expected = report.expectedKwh;
      const implied = ((expected - report.actualKwh) / expected) * 100;
      console.log(
        `| ${c.name} | ${m.label} | ${body.statistics.n} | ${pct(body.statistics.cvRmsePercent)} | ${pct(body.statistics.nmbePercent, 3)} | ${pct(body.statistics.r2, 3)} | ` +
          `${pct(implied)} | ${pct(report.uncertainty ? (report.uncertainty.at90.kwh / expected) * 100 : null)} | ${report.significant} | ` +
          `${report.savingsKwh === null ? 'yes' : 'no'} | ${ms.toFixed(0)} | ${(ms / emsMs).toFixed(2)} |`,
      );
    }
    const started = performance.now();
    const days = (from: string, to: string) =>
      [...wholeDaySums(hours, from, to)].filter(([day]) => meanC.has(day)).map(([day, kwh]) => ({ day, kwh, meanC: meanC.get(day)! }));
    const fit = changePointFit(days(c.baseline[0], c.baseline[1]));
    const reporting = days(REPORT[0], REPORT[1]);
    const weekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
    const expected = reporting.reduce((s, d) => s + fit.predict(d.meanC, weekend(d.day)), 0);
    const actual = reporting.reduce((s, d) => s + d.kwh, 0);
    const u90 = annexBUncertainty(fit, reporting.length, expected);
    const ms = performance.now() - started;
    const u68 = (u90 / 1.645) * 0.994;
    console.log(
      `| ${c.name} | change-point ${fit.model} (independent) | ${fit.n} | ${pct(fit.cvRmsePercent)} | — | — | ${pct(((expected - actual) / expected) * 100)} | ` +
        `${pct((u90 / expected) * 100)} | ${u68 / Math.abs(expected - actual) <= 0.5} | — | ${ms.toFixed(0)} | ${(ms / emsMs).toFixed(2)} |`,
    );
  }
  console.log(
    '\nsavings % = (expected − actual) ÷ expected over the reporting year 2019, also where EMS withholds the figure; ± 90 %: G14 Annex B, lag-1 autocorrelation corrected. ' +
      "CalTRACK hourly's p is one monthly segment's columns; the change-point fit's NMBE and R² are not computed.",
  );
} finally {
  await r.close();
}
