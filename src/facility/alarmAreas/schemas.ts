// Shapes of the alarm point → area map (GET/PUT /api/alarms/areas).
import { Type, type Static } from '@sinclair/typebox';
import { ALARM_AREA_MATCHES } from '../../platform/db/schema/alarms.ts';
import { displayTextPattern, stringEnum } from '../../platform/http/schemas.ts';
import { ALARM_CODE_MAX } from '../notifications/poller.ts';

/** At most this many mappings: the map is read for every alarm a poll sees. */
export const ALARM_AREA_LIMIT = 1000;

export const AlarmAreaMapping = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: ALARM_CODE_MAX,
    pattern: '^\\S+$',
    description: 'a gateway point code (match exact), or the start of codes (match prefix, e.g. `srv.`); no white space',
  }),
  match: stringEnum(ALARM_AREA_MATCHES, {
    description: 'exact: this code only; prefix: every code starting with it. An exact mapping wins over any prefix, a longer prefix over a shorter one',
  }),
  area: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: displayTextPattern(true),
    description: 'an area the site knows: the area of a meter (GET /api/meters) or an area card (GET /api/energy/areas)',
  }),
});
export type AlarmAreaMappingValue = Static<typeof AlarmAreaMapping>;

export const AlarmAreaMapBody = Type.Object({
  mappings: Type.Array(AlarmAreaMapping, { maxItems: ALARM_AREA_LIMIT, description: 'the whole map: mappings not listed are removed' }),
});

export const AlarmAreaMap = Type.Object({
  mappings: Type.Array(AlarmAreaMapping, { description: 'exact codes first, then prefixes, each by code' }),
  areas: Type.Array(Type.String(), { description: 'the areas a mapping may name: the meters’ areas and the area cards, by name' }),
});
export type AlarmAreaMapView = Static<typeof AlarmAreaMap>;
