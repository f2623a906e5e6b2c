// The gateway contract (DESIGN.md "IoT gateway contract") as TypeBox: validates what goes upstream and documents what comes back.
import { Type } from '@sinclair/typebox';
import { MAX_PAGE, Timestamp } from '../platform/http/schemas.ts';

export const PointCode = Type.String({ minLength: 1, maxLength: 128, description: 'Point code as the gateway names it, e.g. meter.main.kwh' });
const Codes = Type.Array(PointCode, { minItems: 1, maxItems: 500 });
const Value = Type.Union([Type.Number(), Type.Boolean(), Type.String({ maxLength: 256 })], {
  description: 'A number for setpoints; booleans and strings for command points',
});
const Instant = Type.String({ format: 'date-time', description: 'ISO 8601' });

export const ValuesBody = Type.Object({ codes: Codes });
export const ValuesQuery = Type.Object({
  codes: Type.Array(PointCode, { minItems: 1, maxItems: 500, description: 'Repeat the parameter (codes=a&codes=b) or separate codes with commas' }),
});
export const ValuesAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      code: PointCode,
      value: Type.Union([Type.Number(), Type.Boolean(), Type.String(), Type.Null()]),
      quality: Type.String({ description: 'good, forced or bad (unknown point or no reading)' }),
      ts: Timestamp,
    }),
  ),
});

export const HistoryBody = Type.Object({ code: PointCode, start: Instant, end: Instant });
export const HistoryQuery = HistoryBody;
export const HistoryAnswer = Type.Object({
  data: Type.Array(Type.Object({ ts: Timestamp, value: Type.Union([Type.Number(), Type.Boolean(), Type.String(), Type.Null()]) })),
});

export const WriteBody = Type.Object({ code: PointCode, value: Value });
export const ForceWriteBody = Type.Object({
  code: PointCode,
  value: Type.Union([Value, Type.Null()], { description: 'The value to hold the point at; null releases the override (the simulator supports it)' }),
});
export const WriteAnswer = Type.Object({ success: Type.Boolean() });

export const AlarmsQuery = Type.Object({
  start: Type.Optional(Instant),
  end: Type.Optional(Instant),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
});
export const AlarmsAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.Integer(),
      code: PointCode,
      level: Type.String({ description: 'info, warning or critical' }),
      message: Type.String(),
      state: Type.String({ description: 'active or cleared' }),
      raisedAt: Timestamp,
      clearedAt: Type.Union([Timestamp, Type.Null()]),
    }),
  ),
  total: Type.Integer({ minimum: 0 }),
});
export const AlarmConfigsAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.Integer(),
      code: PointCode,
      condition: Type.String({ description: 'above or below' }),
      threshold: Type.Number(),
      level: Type.String(),
      enabled: Type.Boolean(),
      message: Type.String(),
    }),
  ),
});

export const GatewayTokenInfo = Type.Object({ token: Type.String(), expiresAt: Timestamp, refreshedAt: Timestamp });

/** The gateway as /api/health shows it: the last known state, never a live call. */
export const IotHealthSchema = Type.Object({
  gateway: Type.Union([Type.Literal('reachable'), Type.Literal('unreachable'), Type.Literal('unknown')]),
  checkedAt: Type.Union([Timestamp, Type.Null()], { description: 'When a request or the background probe last reached (or failed to reach) it' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  tokenAgeSec: Type.Union([Type.Integer(), Type.Null()]),
  tokenExpiresInSec: Type.Union([Type.Integer(), Type.Null()]),
});
