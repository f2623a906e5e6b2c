// /api/overview: KPI cards and the weekly energy chart for signed-in users.
import type { OverviewService } from './service.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { OverviewStats, WeeklyEnergy } from './schemas.ts';
import { OVERVIEW_STATS_EXAMPLE, OVERVIEW_WEEKLY_EXAMPLE } from '../examples/responses.ts';

const tags = ['overview'];

export type OverviewRouteNeeds = { overview: OverviewService };

export function overviewRoutes({ overview }: OverviewRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/overview/stats',
      responseExample: OVERVIEW_STATS_EXAMPLE,
      access: 'viewer',
      summary: 'KPI cards computed from the tables',
      description:
        'Energy today and this month, power, cost and carbon, alert, fault and maintenance counts, as the overview cards show them. Changes nothing.',
      tags,
      schemas: { response: { 200: OverviewStats } },
      // A kept answer (src/platform/db/kept.ts) is the same object until it changes: its validated JSON is sent again.
      reusesBody: true,
      handler: () => overview.stats(),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/overview/energy/weekly',
      responseExample: OVERVIEW_WEEKLY_EXAMPLE,
      access: 'viewer',
      summary: 'Site energy for each of the last 7 days',
      description:
        'Days are counted in the platform time zone; a day with no data has kwh null (never 0), and every day and the week carry the shares of measured, estimated and missing data.',
      tags,
      schemas: { response: { 200: WeeklyEnergy } },
      reusesBody: true,
      handler: () => overview.weekly(),
    }),
  ];
}
