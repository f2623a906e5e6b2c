// The simulated building's meters, made once on a first start with the built-in simulator (run by the collection
// before its first collection).
import { everAudited } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { commodityOf, type Meter, type MeterDirectory } from './meters.ts';

/**
 * With the built-in simulator, the first start meters its building: the main incomer (the site's grid import), each
 * sub-meter in its area, the PV array and the grid export, gas and water, and "Rest of building" = the building's
 * consumption (import + generation − export) − sub-meters. Done once: after any meter change it is never redone.
 */
export function ensureSimulatorMeters(
  db: Db,
  meters: MeterDirectory,
  catalogue: { code: string; name: string; kind: string; unit?: string }[],
  logger: Logger,
): number {
  const touched = everAudited(db, 'meters');
  if (touched || meters.all().length) return 0;
  const areaOf = (code: string) =>
    code.startsWith('meter.hvac') ? 'HVAC' : code.startsWith('meter.lighting') ? 'Lighting' : code.startsWith('meter.it') ? 'Server room' : 'Tenants';
  const counters = catalogue.filter((point) => point.kind === 'energy');
  const main = counters.find((point) => point.code === 'meter.main.kwh');
  if (!main) return 0;
  // Utility counters (issue 26) by what the catalogue says they measure; the rest are electricity sub-meters.
  const utility = (point: { code: string; name: string; kind: string; unit?: string }) => {
    const what = commodityOf(point.kind, point.unit ?? 'kWh', `${point.code.replace(/[._-]/g, ' ')} ${point.name}`);
    return what && (what.commodity !== 'electricity' || what.role !== 'import') ? what : null;
  };
  const created: Meter[] = [];
  db.sqlite.transaction(() => {
    const site = meters.create({ name: 'Main incomer', code: main.code, kind: 'energy', site: true }, null);
    const subs = counters
      .filter((point) => point !== main && !utility(point))
      .map((point) => meters.create({ name: point.name.replace(/ energy$/, ''), code: point.code, kind: 'energy', area: areaOf(point.code) }, null));
    const others = counters
      .filter((point) => utility(point))
      .map((point) => meters.create({ name: point.name.replace(/ (energy|volume)$/, ''), code: point.code, kind: 'energy', ...utility(point)! }, null));
    // The building's consumption is what it draws plus what its panels make less what it feeds back.
    const flows = others
      .filter((meter) => meter.commodity === 'electricity')
      .map((meter) => ({ meterId: meter.id, sign: meter.role === 'generation' ? (1 as const) : (-1 as const) }));
    const rest = meters.create(
      {
        name: 'Rest of building',
        kind: 'virtual',
        area: 'Other',
        terms: [{ meterId: site.id, sign: 1 }, ...flows, ...subs.map((sub) => ({ meterId: sub.id, sign: -1 as const }))],
      },
      null,
    );
    created.push(site, ...subs, ...others, rest);
  })();
  logger.info({ meters: created.length }, 'metered the simulated building: main incomer, sub-meters and rest of building');
  return created.length;
}
