// /api/energy/areas: the per-area summary cards; operators replace the set.
import type { AppDeps } from '../appDeps.ts';
import { defineRoute } from '../http/route.ts';
import { ErrorBody } from '../http/schemas.ts';
import { EnergyAreas, EnergyAreasBody } from './schemas.ts';
import { EnergyService } from './service.ts';

const tags = ['energy'];

export function energyRoutes({ db, audit }: AppDeps) {
  const energy = new EnergyService(db, audit);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/areas',
      access: 'viewer',
      summary: 'Per-area energy summary cards',
      tags,
      schemas: { response: { 200: EnergyAreas } },
      handler: () => ({ areas: energy.list() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/energy/areas',
      access: 'operator',
      summary: 'Replace the set of area cards',
      description:
        'One transaction: areas not listed are removed, listed ones are created or updated by name (ids are kept). ' +
        "Also writes today's energy_daily rows (site day in the configured time zone): one per area and area \"total\" = the sum of todayKwh, " +
        'which feeds GET /api/overview/energy/weekly. Names are unique case-insensitively; todayKwh ≤ monthKwh ≤ yearKwh.',
      tags,
      schemas: { body: EnergyAreasBody, response: { 200: EnergyAreas, 400: ErrorBody } },
      handler: ({ body, user }) => ({ areas: energy.replace(user, body.areas) }),
    }),
  ];
}
