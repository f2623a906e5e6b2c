// /api/overview: KPI cards and the weekly energy chart for signed-in users.
import type { AppDeps } from '../appDeps.ts';
import { defineRoute } from '../http/route.ts';
import { OverviewStats, WeeklyEnergy } from './schemas.ts';
import { OverviewService } from './service.ts';

const tags = ['overview'];

export function overviewRoutes({ db, energy, analysis }: AppDeps) {
  const overview = new OverviewService(db, energy.figures, analysis.comparisons, analysis.demandCharges, energy.commodities);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/overview/stats',
      access: 'viewer',
      summary: 'KPI cards computed from the tables',
      description: "Energy today and this month, power, cost and carbon, alert, fault and maintenance counts, as the overview cards show them. Changes nothing.",
      tags,
      schemas: { response: { 200: OverviewStats } },
      handler: () => overview.stats(),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/overview/energy/weekly',
      access: 'viewer',
      summary: 'Site energy for each of the last 7 days',
      description: 'Days are counted in the platform time zone; a day with no recorded total is 0.',
      tags,
      schemas: { response: { 200: WeeklyEnergy } },
      handler: () => overview.weekly(),
    }),
  ];
}
