// The public dashboard payload (cached while the database is unchanged), recent alerts and per-user dashboard settings.
import type { AuditLog } from '../audit/service.ts';
import type { ConfigStore } from '../configs/service.ts';
import type { Db } from '../db/client.ts';
import { Kept } from '../db/kept.ts';
import { FIGURE_TABLES } from '../energy/figures.ts';
import type { DashboardWidget } from '../db/schema/settings.ts';
import type { EnergyService } from '../energy/service.ts';
import { BadRequest, type ErrorDetail } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import type { OverviewService } from '../overview/service.ts';
import type { DashboardAlertView, DashboardSettingsPatch, DashboardSettingsView, PublicDashboardView } from './schemas.ts';

/** Wall screens poll this; within one such period an unchanged database serves the same payload object. */
export const PUBLIC_CACHE_MS = 1000;
const PUBLIC_ALERTS = 10;
/** Bounds what one user's layout may store (widget options are free-form). */
export const MAX_LAYOUT_BYTES = 64 * 1024;

export const DEFAULT_LAYOUT: DashboardWidget[] = [
  { id: 'kpis', type: 'kpi', x: 0, y: 0, w: 12, h: 2 },
  { id: 'weekly', type: 'weeklyEnergy', x: 0, y: 2, w: 8, h: 4 },
  { id: 'alerts', type: 'alerts', x: 8, y: 2, w: 4, h: 4 },
  { id: 'areas', type: 'areas', x: 0, y: 6, w: 12, h: 3 },
  { id: 'scene', type: 'scene', x: 0, y: 9, w: 12, h: 6 },
];

export type GatewayState = PublicDashboardView['gateway'];

type Parts = { configs: ConfigStore; energy: EnergyService; overview: OverviewService; gateway: () => GatewayState };

export class DashboardService {
  private readonly publicAlerts;
  private readonly activeByLevel;
  private readonly recent;
  private readonly settingsOf;
  private readonly saveSettings;
  private readonly defaultRefresh;
  /** The public payload, per second, kept until a table it reads is written (the gateway state moves without one). */
  private readonly kept: Kept<PublicDashboardView>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly parts: Parts,
  ) {
    const sqlite = db.sqlite;
    this.publicAlerts = sqlite.prepare(
      // A gateway alarm's title is the gateway's own alarm text (it may name people, tenants or faults in detail): the
      // public payload names only the point it is on. Alerts people wrote keep their title.
      `SELECT id, CASE WHEN alarm_key IS NULL THEN title ELSE 'Alarm on ' || coalesce(source, 'the gateway') END AS title, level, status, area, occurred_at AS occurredAt
       FROM alerts ORDER BY occurred_at DESC, id DESC LIMIT ${PUBLIC_ALERTS}`,
    );
    this.activeByLevel = sqlite
      .prepare("SELECT level, count(*) FROM alerts WHERE status = 'active' AND (shelved_until IS NULL OR shelved_until <= ?) GROUP BY level")
      .raw();
    // Arrays arrive as JSON text, so every filter combination is this one prepared statement.
    this.recent = sqlite.prepare(
      `SELECT id, title, message, level, source, area, status, occurred_at AS occurredAt, acknowledged_at AS acknowledgedAt, resolved_at AS resolvedAt
       FROM alerts
       WHERE (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
         AND (@levels IS NULL OR level IN (SELECT value FROM json_each(@levels)))
       ORDER BY occurred_at DESC, id DESC LIMIT @limit`,
    );
    this.settingsOf = sqlite.prepare(
      'SELECT layout, refresh_interval_sec AS refreshIntervalSec, theme, updated_at AS updatedAt FROM dashboard_settings WHERE user_id = ?',
    );
    this.saveSettings = sqlite.prepare(
      `INSERT INTO dashboard_settings (user_id, layout, refresh_interval_sec, theme, updated_at) VALUES (@userId, @layout, @refreshIntervalSec, @theme, @updatedAt)
       ON CONFLICT(user_id) DO UPDATE SET layout = excluded.layout, refresh_interval_sec = excluded.refresh_interval_sec,
         theme = excluded.theme, updated_at = excluded.updated_at`,
    );
    this.defaultRefresh = sqlite.prepare('SELECT refresh_interval_sec FROM platform_config WHERE id = 1').pluck();
    // Everything the payload reads: the overview cards and weekly chart, the area cards, alerts, settings, the scene.
    this.kept = new Kept(sqlite, {
      name: 'dashboard.public',
      tables: [
        ...FIGURE_TABLES,
        'energy_areas',
        'energy_daily',
        'meter_state',
        'alerts',
        'faults',
        'maintenance',
        'calorific_versions',
        'three_d_config',
        'model_files',
      ],
      max: 2,
    });
  }

  /** The public payload: no user names, ids or message text. Recomputed when the data changed or after PUBLIC_CACHE_MS. */
  publicPayload(now: number = Date.now()): PublicDashboardView {
    return this.kept.get(String(Math.floor(now / PUBLIC_CACHE_MS)), () => this.computePublicPayload(now));
  }

  private computePublicPayload(now: number): PublicDashboardView {
    const at = new Date(now);
    const platform = this.parts.configs.platform();
    const scene = this.parts.configs.threeD();
    const payload: PublicDashboardView = {
      platform: {
        siteName: platform.siteName,
        logoUrl: platform.logoUrl,
        timezone: platform.timezone,
        locale: platform.locale,
        currency: platform.currency,
        refreshIntervalSec: platform.refreshIntervalSec,
      },
      overview: this.parts.overview.stats(at),
      weeklyEnergy: this.parts.overview.weekly(at),
      areas: this.parts.energy
        .list()
        .map(({ name, todayKwh, monthKwh, yearKwh, powerKw, updatedAt }) => ({ name, todayKwh, monthKwh, yearKwh, powerKw, updatedAt })),
      scene: {
        cameraPreset: scene.cameraPreset,
        ambientIntensity: scene.ambientIntensity,
        hotspots: scene.hotspots,
        labels: scene.labels,
        modelUrl: scene.modelUrl,
      },
      recentAlerts: this.publicAlerts.all() as PublicDashboardView['recentAlerts'],
      alertCounts: { info: 0, warning: 0, critical: 0, ...Object.fromEntries(this.activeByLevel.all(at.toISOString()) as [string, number][]) },
      gateway: this.parts.gateway(),
      generatedAt: at.toISOString(),
    };
    return payload;
  }

  recentAlerts(filters: { limit: number; status?: string[]; level?: string[] }): DashboardAlertView[] {
    return this.recent.all({
      limit: filters.limit,
      statuses: filters.status?.length ? JSON.stringify(filters.status) : null,
      levels: filters.level?.length ? JSON.stringify(filters.level) : null,
    }) as DashboardAlertView[];
  }

  settings(userId: number): DashboardSettingsView {
    const row = this.settingsOf.get(userId) as
      | { layout: string; refreshIntervalSec: number; theme: DashboardSettingsView['theme']; updatedAt: string }
      | undefined;
    if (!row) return { layout: DEFAULT_LAYOUT, refreshIntervalSec: this.defaultRefresh.get() as number, theme: 'light', updatedAt: null };
    return { ...row, layout: JSON.parse(row.layout) as DashboardWidget[] };
  }

  /** Merges the patch over the stored settings (or the defaults) and stores the result for this user only. */
  updateSettings(actor: AuthUser, patch: DashboardSettingsPatch): DashboardSettingsView {
    const details: ErrorDetail[] = [];
    if (patch.layout) {
      const ids = new Map<string, number>();
      patch.layout.forEach((widget, index) => {
        if (ids.has(widget.id)) details.push({ path: `body.layout.${index}.id`, message: `duplicates layout.${ids.get(widget.id)}.id` });
        ids.set(widget.id, index);
      });
      if (Buffer.byteLength(JSON.stringify(patch.layout)) > MAX_LAYOUT_BYTES)
        details.push({ path: 'body.layout', message: `must be at most ${MAX_LAYOUT_BYTES} bytes as JSON` });
    }
    if (details.length) throw new BadRequest('Invalid body', details);

    return this.db.sqlite.transaction(() => {
      const before = this.settings(actor.id);
      const next = { ...before, ...patch, updatedAt: new Date().toISOString() };
      this.saveSettings.run({
        userId: actor.id,
        layout: JSON.stringify(next.layout),
        refreshIntervalSec: next.refreshIntervalSec,
        theme: next.theme,
        updatedAt: next.updatedAt,
      });
      const changed = (Object.keys(patch) as (keyof DashboardSettingsPatch)[]).filter((key) => JSON.stringify(before[key]) !== JSON.stringify(next[key]));
      this.audit.record({
        actor,
        action: 'update',
        resource: 'dashboard_settings',
        resourceId: actor.id,
        before: Object.fromEntries(changed.map((key) => [key, before[key]])),
        after: Object.fromEntries(changed.map((key) => [key, next[key]])),
      });
      return this.settings(actor.id);
    })();
  }
}
