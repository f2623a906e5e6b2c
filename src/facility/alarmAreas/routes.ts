// /api/alarms/areas: which area each gateway alarm point's alerts are raised in (admins write, operators read).
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { AlarmAreaMap, AlarmAreaMapBody } from './schemas.ts';
import type { AlarmAreas } from './service.ts';

const tags = ['alerts'];

export type AlarmAreaRouteNeeds = { alarmAreas: AlarmAreas };

export function alarmAreaRoutes({ alarmAreas }: AlarmAreaRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/alarms/areas',
      responseExample: {
        mappings: [
          { code: 'temp.serverroom', match: 'exact', area: 'Server room' },
          { code: 'srv.', match: 'prefix', area: 'Server room' },
        ],
        areas: ['HVAC', 'Lighting', 'Other', 'Server room', 'Tenants'],
      },
      access: 'operator',
      summary: 'Which area each gateway alarm point belongs to',
      description:
        'The admin’s map of alarm point codes (exact, or a prefix) to areas, and the area names a mapping may use. ' +
        'A gateway alarm is raised in the area of its exact code, else of its longest matching prefix; with no mapping, in the area of the meter ' +
        'with that code, else in the area its point’s name starts with (gateway point catalogue, e.g. "Server room temperature"); else in none. Changes nothing.',
      tags,
      schemas: { response: { 200: AlarmAreaMap } },
      handler: () => alarmAreas.get(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/alarms/areas',
      access: 'admin',
      summary: 'Replace the map of alarm points to areas',
      description:
        'One audited transaction: mappings not listed are removed. Each area must be one the site knows (a meter’s area or an area card; case is ' +
        'taken from the site’s spelling). Applies to alarms that become alerts after it: alerts already raised keep their area.',
      example: {
        mappings: [
          { code: 'temp.serverroom', match: 'exact', area: 'Server room' },
          { code: 'srv.', match: 'prefix', area: 'Server room' },
        ],
      },
      tags,
      schemas: { body: AlarmAreaMapBody, response: { 200: AlarmAreaMap, 400: ErrorBody } },
      handler: ({ body, user }) => alarmAreas.replace(user, body.mappings),
    }),
  ];
}
