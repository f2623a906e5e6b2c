// The face of analysis/: what the other contexts use of it. Imports from outside analysis/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is analysis's own business.
export type { Baselines } from './baselines.ts';
export { FSU_LIMIT } from './guardRails.ts';
export { Comparisons, type Comparison, type PeriodFigure } from './comparisons.ts';
export { DemandCharges, type MonthDemandCharge } from './demandCharges.ts';
export { LoadShedder, type LoadSheddingConfig } from './loadShedding.ts';
export type { WeatherNormalisedChange } from './normalisation.ts';
export { LoadSheddingGuard } from './loadSheddingGuard.ts';
export { outdoorDaysZoneKeyed } from './weather.ts';
export {
  analysisRouteGroups,
  buildAnalysis,
  buildAnalysisModule,
  buildLoadShedding,
  buildAnomalyChecks,
  type Analysis,
  type AnalysisNeeds,
  type LoadSheddingNeeds,
} from './module.ts';
