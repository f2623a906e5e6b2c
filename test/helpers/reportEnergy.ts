// The energy a report is built from, for tests and benchmarks that build a ReportContentBuilder without the service's
// pieces (the service hands the builder its one SiteEnergy, energy.site): a SiteEnergy over the site's meters once any
// meter exists, else over energy_daily (what PUT /api/energy/areas records per site day, for a site without meters).
import { type EnergyFigures, SiteEnergy } from '../../src/energy/index.ts';
import type { Db } from '../../src/platform/db/client.ts';
import type { ReportEnergySource } from '../../src/reporting/reports/content.ts';

/** The hand-entered daily totals only, whatever meters exist (a site without meters; the report benchmark). */
export function dailyEnergyFigures(db: Db): ReportEnergySource {
  return new SiteEnergy(db);
}

/** The metered figures (the same the energy API answers) when any meter exists, else the hand-entered daily totals. */
export function siteEnergyFigures(db: Db, metered: EnergyFigures): ReportEnergySource {
  return new SiteEnergy(db, metered);
}
