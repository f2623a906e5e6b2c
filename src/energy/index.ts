// The face of energy/: what the other contexts use of it. Imports from outside energy/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is energy's own business.
export { AllUtilitiesSchema, allUtilities, type AllUtilities } from './allUtilities.ts';
export { areaCardNames, meterAreaCards, type AreaCards } from './areaCards.ts';
export { COMMODITY_UNITS, type CommodityFigures, type CommodityFiguresView } from './commodities.ts';
export { DemandWatch, WARNING_MIN_ELAPSED_MS } from './demandWatch.ts';
export { FIGURE_TABLES, nextMonth, type EnergyFigures, type Totals } from './figures.ts';
export type { SitePeak } from './intervalSums.ts';
export {
  buildEnergy,
  buildEnergyModule,
  buildEnergyReads,
  energyRouteGroups,
  buildDemandWatch,
  type Energy,
  type EnergyReads,
} from './module.ts';
export { SitePeakSchema } from './schemas.ts';
export { SiteEnergy, type Coverage, type LoadCurve, type PeriodFigures } from './siteEnergy.ts';
export type { PeakWarningLog, PeakWarningRecord } from './demandWatch.ts';
