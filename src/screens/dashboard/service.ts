// The public dashboard payload (cached while the database is unchanged), recent alerts and per-user dashboard settings.
import { siteSettings, type ConfigStore, type SiteSettings } from '../../site/index.ts';
import { publicAlertTitle } from '../../facility/index.ts';
import { FIGURE_TABLES, type AreaCards } from '../../energy/index.ts';
import { and, count, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { alerts, dashboardSettings } from '../../platform/db/schema/index.ts';
import { Kept } from '../../platform/db/kept.ts';
import type { DashboardWidget } from '../../platform/db/schema/settings.ts';
import { BadRequest, type ErrorDetail } from '../../platform/errors.ts';
import type { AuthUser } from '../../platform/http/route.ts';
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

type Parts = { configs: ConfigStore; energy: AreaCards; overview: OverviewService; gateway: () => GatewayState };

export class DashboardService {
  private readonly publicAlerts;
  private readonly activeByLevel;
  private readonly recent;
  private readonly recentCount;
  private readonly settingsOf;
  private readonly saveSettings;
  /** The site's settings as site/ keeps them (the default refresh of a dashboard without its own settings). */
  private readonly site: () => SiteSettings;
  /** The public payload, per second, kept until a table it reads is written (the gateway state moves without one). */
  private readonly kept: Kept<PublicDashboardView>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly parts: Parts,
  ) {
    const orm = db.orm;
    this.publicAlerts = orm
      .select({
        id: alerts.id,
        // The public-title rule (src/facility/alerts/publicTitle.ts): a gateway alarm names only its point.
        title: publicAlertTitle(),
        level: alerts.level,
        status: alerts.status,
        area: alerts.area,
        occurredAt: alerts.occurredAt,
      })
      .from(alerts)
      .orderBy(desc(alerts.occurredAt), desc(alerts.id))
      .limit(PUBLIC_ALERTS)
      .prepare();
    this.activeByLevel = orm
      .select({ level: alerts.level, n: count() })
      .from(alerts)
      .where(and(eq(alerts.status, 'active'), or(isNull(alerts.shelvedUntil), lte(alerts.shelvedUntil, sql.placeholder('now')))))
      .groupBy(alerts.level)
      .prepare();
    // Arrays arrive as JSON text, so every filter combination is this one prepared statement (json_each: drizzle has no word for it).
    const statuses = sql.placeholder('statuses');
    const levels = sql.placeholder('levels');
    this.recent = orm
      .select({
        id: alerts.id,
        title: alerts.title,
        message: alerts.message,
        level: alerts.level,
        source: alerts.source,
        area: alerts.area,
        status: alerts.status,
        occurredAt: alerts.occurredAt,
        acknowledgedAt: alerts.acknowledgedAt,
        resolvedAt: alerts.resolvedAt,
      })
      .from(alerts)
      .where(
        and(
          sql`(${statuses} IS NULL OR ${alerts.status} IN (SELECT value FROM json_each(${statuses})))`,
          sql`(${levels} IS NULL OR ${alerts.level} IN (SELECT value FROM json_each(${levels})))`,
        ),
      )
      .orderBy(desc(alerts.occurredAt), desc(alerts.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare();
    this.recentCount = orm
      .select({ n: count() })
      .from(alerts)
      .where(
        and(
          sql`(${statuses} IS NULL OR ${alerts.status} IN (SELECT value FROM json_each(${statuses})))`,
          sql`(${levels} IS NULL OR ${alerts.level} IN (SELECT value FROM json_each(${levels})))`,
        ),
      )
      .prepare();
    this.settingsOf = orm
      .select({
        layout: dashboardSettings.layout,
        refreshIntervalSec: dashboardSettings.refreshIntervalSec,
        theme: dashboardSettings.theme,
        updatedAt: dashboardSettings.updatedAt,
      })
      .from(dashboardSettings)
      .where(eq(dashboardSettings.userId, sql.placeholder('userId')))
      .prepare();
    this.saveSettings = orm
      .insert(dashboardSettings)
      .values({
        userId: sql.placeholder('userId'),
        layout: sql.placeholder('layout'),
        refreshIntervalSec: sql.placeholder('refreshIntervalSec'),
        theme: sql.placeholder('theme'),
        updatedAt: sql.placeholder('updatedAt'),
      })
      .onConflictDoUpdate({
        target: dashboardSettings.userId,
        set: {
          layout: sql`excluded.layout`,
          refreshIntervalSec: sql`excluded.refresh_interval_sec`,
          theme: sql`excluded.theme`,
          updatedAt: sql`excluded.updated_at`,
        },
      })
      .prepare();
    this.site = siteSettings(db);
    // Everything the payload reads: the overview cards and weekly chart, the area cards, alerts, settings, the scene.
    this.kept = new Kept(db.sqlite, {
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
        'outdoor_days',
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
      recentAlerts: this.publicAlerts.all(),
      alertCounts: {
        info: 0,
        warning: 0,
        critical: 0,
        ...Object.fromEntries(this.activeByLevel.all({ now: at.toISOString() }).map(({ level, n }) => [level, n])),
      },
      gateway: this.parts.gateway(),
      generatedAt: at.toISOString(),
    };
    return payload;
  }

  /** A page of alerts, newest first; `limit` (deprecated) is the page size when given. */
  recentAlerts(filters: { page: number; pageSize: number; limit?: number; status?: string[]; level?: string[] }): {
    items: DashboardAlertView[];
    total: number;
    page: number;
    pageSize: number;
  } {
    const pageSize = filters.limit ?? filters.pageSize;
    const where = {
      statuses: filters.status?.length ? JSON.stringify(filters.status) : null,
      levels: filters.level?.length ? JSON.stringify(filters.level) : null,
    };
    return this.db.sqlite.transaction(() => ({
      items: this.recent.all({ ...where, limit: pageSize, offset: (filters.page - 1) * pageSize }),
      total: this.recentCount.get(where)!.n,
      page: filters.page,
      pageSize,
    }))();
  }

  settings(userId: number): DashboardSettingsView {
    const row = this.settingsOf.get({ userId });
    if (!row) return { layout: DEFAULT_LAYOUT, refreshIntervalSec: this.site().refreshIntervalSec, theme: 'light', updatedAt: null };
    // The column holds what updateSettings stored: a theme the request schema accepted.
    return { ...row, theme: row.theme as DashboardSettingsView['theme'] };
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
        layout: next.layout,
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
