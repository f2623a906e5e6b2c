// The energy a report is built from: the site's energy (SiteEnergy), from its meters once any meter exists, else from
// energy_daily (what PUT /api/energy/areas records per site day, for a site without meters).
import { type EnergyFigures, SiteEnergy, type Coverage, type LoadCurve, type PeriodFigures } from '../../energy/index.ts';
import type { Db } from '../../platform/db/client.ts';

export type { Coverage, LoadCurve, PeriodFigures };

/** What a report asks of the site's energy: the period's figures, how much of it holds data, a day's load curve, and their source. */
export type ReportEnergySource = Pick<SiteEnergy, 'source' | 'periodFigures' | 'coverage' | 'loadCurve'>;

/** The hand-entered daily totals only, whatever meters exist (a site without meters; the report benchmark). */
export function dailyEnergyFigures(db: Db): ReportEnergySource {
  return new SiteEnergy(db);
}

/** The metered figures (the same the energy API answers) when any meter exists, else the hand-entered daily totals. */
export function siteEnergyFigures(db: Db, metered: EnergyFigures): ReportEnergySource {
  return new SiteEnergy(db, metered);
}
