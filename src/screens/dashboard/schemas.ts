// Shapes of the public dashboard payload, the recent-alerts list and per-user dashboard settings.
import { CameraPreset, Hotspot, SceneLabel } from '../../site/index.ts';
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_LEVELS, ALERT_STATUSES } from '../../platform/db/schema/facility.ts';
import { NullableTimestamp, Page, PageQuery, Timestamp } from '../../platform/http/schemas.ts';
import { OverviewStats, WeeklyEnergy } from '../overview/schemas.ts';

// Plain enums: one validation error ("must be one of: …") instead of one per literal.
const Level = Type.Unsafe<(typeof ALERT_LEVELS)[number]>({ type: 'string', enum: [...ALERT_LEVELS] });
const Status = Type.Unsafe<(typeof ALERT_STATUSES)[number]>({ type: 'string', enum: [...ALERT_STATUSES] });
const NullableString = Type.Union([Type.String(), Type.Null()]);

/** What the public portal may show about an alert: no message text, no people. */
export const PublicAlert = Type.Object({
  id: Type.Integer(),
  title: Type.String({ description: 'a gateway alarm shows "Alarm on <point code>", never the gateway\'s alarm text' }),
  level: Level,
  status: Status,
  area: NullableString,
  occurredAt: Timestamp,
});

export const PublicDashboard = Type.Object(
  {
    platform: Type.Object({
      siteName: Type.String(),
      logoUrl: NullableString,
      timezone: Type.String(),
      locale: Type.String(),
      currency: Type.String(),
      refreshIntervalSec: Type.Integer(),
    }),
    overview: OverviewStats,
    weeklyEnergy: WeeklyEnergy,
    areas: Type.Array(
      Type.Object({
        name: Type.String(),
        todayKwh: Type.Number(),
        monthKwh: Type.Number(),
        yearKwh: Type.Number(),
        powerKw: Type.Number(),
        updatedAt: Timestamp,
      }),
    ),
    scene: Type.Object({
      cameraPreset: CameraPreset,
      ambientIntensity: Type.Number(),
      hotspots: Type.Array(Hotspot),
      labels: Type.Array(SceneLabel),
      modelUrl: NullableString,
    }),
    recentAlerts: Type.Array(PublicAlert, { description: 'the 10 most recent, newest first' }),
    alertCounts: Type.Object(
      { info: Type.Integer(), warning: Type.Integer(), critical: Type.Integer() },
      { description: 'active (unacknowledged) alerts by level, shelved ones left out' },
    ),
    gateway: Type.Object(
      {
        state: Type.Union([Type.Literal('up'), Type.Literal('degraded'), Type.Literal('down'), Type.Literal('unknown')], {
          description: 'degraded: the gateway answers but the meter collection fails (figures are not current)',
        }),
        checkedAt: Type.Union([Timestamp, Type.Null()], { description: 'when the service last reached, or failed to reach, the IoT gateway' }),
        dataAt: Type.Optional(Type.Union([Timestamp, Type.Null()], { description: 'the last good meter collection: figures are as of then' })),
      },
      { description: 'the IoT gateway as the service last saw it (never waits for it)' },
    ),
    generatedAt: Timestamp,
  },
  { description: 'Read-only, no personal data. Computed at most about once a second and whenever the data changed.' },
);
export type PublicDashboardView = Static<typeof PublicDashboard>;

export const RecentAlertsQuery = Type.Object({
  ...PageQuery,
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, deprecated: true, description: 'deprecated: use pageSize (given, it is the page size; page still counts)' }),
  ),
  status: Type.Optional(Type.Array(Status, { uniqueItems: true, maxItems: ALERT_STATUSES.length, description: 'one or more; repeat the parameter' })),
  level: Type.Optional(Type.Array(Level, { uniqueItems: true, maxItems: ALERT_LEVELS.length, description: 'one or more; repeat the parameter' })),
});

export const DashboardAlert = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  message: Type.String(),
  level: Level,
  source: NullableString,
  area: NullableString,
  status: Status,
  occurredAt: Timestamp,
  acknowledgedAt: NullableTimestamp,
  resolvedAt: NullableTimestamp,
});
export type DashboardAlertView = Static<typeof DashboardAlert>;

export const RecentAlerts = Page(DashboardAlert);

export const Widget = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, description: 'unique within the layout' }),
    type: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', description: 'widget kind, e.g. kpi, weeklyEnergy, areas, alerts, scene' }),
    x: Type.Integer({ minimum: 0, maximum: 1000 }),
    y: Type.Integer({ minimum: 0, maximum: 1000 }),
    w: Type.Integer({ minimum: 1, maximum: 100 }),
    h: Type.Integer({ minimum: 1, maximum: 100 }),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'widget-specific settings, kept as given' })),
  },
  { additionalProperties: false },
);

export const THEMES = ['light', 'dark', 'system'] as const;
const Theme = Type.Unsafe<(typeof THEMES)[number]>({ type: 'string', enum: [...THEMES] });

export const DashboardSettings = Type.Object({
  layout: Type.Array(Widget),
  refreshIntervalSec: Type.Integer(),
  theme: Theme,
  updatedAt: Type.Union([Timestamp, Type.Null()], { description: 'null while the user still has the defaults' }),
});
export type DashboardSettingsView = Static<typeof DashboardSettings>;

export const DashboardSettingsUpdate = Type.Object(
  {
    layout: Type.Optional(Type.Array(Widget, { maxItems: 50 })),
    refreshIntervalSec: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600 })),
    theme: Type.Optional(Theme),
  },
  { additionalProperties: false, minProperties: 1, description: 'Partial update: omitted fields keep their value (or the default).' },
);
export type DashboardSettingsPatch = Static<typeof DashboardSettingsUpdate>;
