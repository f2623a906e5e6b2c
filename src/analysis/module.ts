// The energy-management pieces (comparisons, demand charges, baselines, EnPIs, anomalies), built once on the energy feature.
import type { Db } from '../db/client.ts';
import type { Energy } from '../energy/module.ts';
import { Comparisons } from './comparisons.ts';
import { DemandCharges } from './demandCharges.ts';
import { PeakWarnings } from './peakWarnings.ts';

export type Analysis = { comparisons: Comparisons; demandCharges: DemandCharges; peakWarnings: PeakWarnings };

export function buildAnalysis(db: Db, energy: Energy): Analysis {
  return { comparisons: new Comparisons(db, energy.figures, energy.tariffs), demandCharges: new DemandCharges(energy.figures, energy.tariffs), peakWarnings: new PeakWarnings(db) };
}
