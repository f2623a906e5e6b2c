// The platform configuration and the 3D scene: single rows (id 1, seeded by migration), admin writes audited.
import { auditChanges } from '../db/auditTrail.ts';
import type { Db } from '../db/client.ts';
import type { AuditLog } from '../db/auditTrail.ts';
import type { CameraPreset, Hotspot, SceneLabel } from '../db/schema/settings.ts';
import { BadRequest, type ErrorDetail } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import type { PlatformConfigPatch, PlatformConfigView, ThreeDConfigPatch, ThreeDConfigView } from './schemas.ts';
import type { TimeZoneMove } from '../energy/rezone.ts';

/** Static URL of a model file; the models feature serves <data dir>/models under it. */
export const MODEL_URL_PREFIX = '/static/models/';

export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function canonicalLocale(value: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(value)[0];
  } catch {
    return undefined;
  }
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

function invalid(details: ErrorDetail[]): BadRequest {
  return new BadRequest('Invalid body', details);
}

/** Fields whose value differs, for the audit entry's before/after. */
function duplicateIds(list: { id: string }[], path: string): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  list.forEach((item, index) => {
    if (seen.has(item.id)) details.push({ path: `${path}.${index}.id`, message: `duplicates the id "${item.id}"` });
    seen.add(item.id);
  });
  return details;
}

type ThreeDRow = { cameraPreset: string; ambientIntensity: number; hotspots: string; labels: string; modelFileId: number | null; modelStoredName: string | null; updatedAt: string };

export class ConfigStore {
  private readonly selectPlatform;
  private readonly writePlatform;
  private readonly selectScene;
  private readonly writeScene;
  private readonly modelExists;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    /** Re-keys the stored energy when the time zone changes (src/energy/rezone.ts); none in tests of this table alone. */
    private readonly zoneMove?: Pick<TimeZoneMove, 'change'>,
  ) {
    const sqlite = db.sqlite;
    this.selectPlatform = sqlite.prepare(
      `SELECT site_name AS siteName, logo_url AS logoUrl, timezone, locale, currency, electricity_price AS electricityPrice,
        carbon_factor AS carbonFactor, refresh_interval_sec AS refreshIntervalSec, updated_at AS updatedAt FROM platform_config WHERE id = 1`,
    );
    this.writePlatform = sqlite.prepare(
      `UPDATE platform_config SET site_name = @siteName, logo_url = @logoUrl, timezone = @timezone, locale = @locale, currency = @currency,
        electricity_price = @electricityPrice, carbon_factor = @carbonFactor, refresh_interval_sec = @refreshIntervalSec, updated_at = @updatedAt WHERE id = 1`,
    );
    this.selectScene = sqlite.prepare(
      `SELECT t.camera_preset AS cameraPreset, t.ambient_intensity AS ambientIntensity, t.hotspots, t.labels, t.model_file_id AS modelFileId,
        m.stored_name AS modelStoredName, t.updated_at AS updatedAt
       FROM three_d_config t LEFT JOIN model_files m ON m.id = t.model_file_id WHERE t.id = 1`,
    );
    this.writeScene = sqlite.prepare(
      `UPDATE three_d_config SET camera_preset = @cameraPreset, ambient_intensity = @ambientIntensity, hotspots = @hotspots, labels = @labels,
        model_file_id = @modelFileId, updated_at = @updatedAt WHERE id = 1`,
    );
    this.modelExists = sqlite.prepare('SELECT 1 FROM model_files WHERE id = ?').pluck();
  }

  platform(): PlatformConfigView {
    return this.selectPlatform.get() as PlatformConfigView;
  }

  async updatePlatform(actor: AuthUser, patch: PlatformConfigPatch): Promise<PlatformConfigView> {
    const details: ErrorDetail[] = [];
    if (patch.timezone !== undefined && !isTimeZone(patch.timezone)) details.push({ path: 'body.timezone', message: 'is not a known IANA time zone (e.g. Europe/Berlin, UTC)' });
    let locale = patch.locale;
    if (locale !== undefined) {
      locale = canonicalLocale(locale);
      if (!locale) details.push({ path: 'body.locale', message: 'is not a valid BCP 47 language tag (e.g. en-US)' });
    }
    if (patch.currency !== undefined && !CURRENCIES.has(patch.currency)) details.push({ path: 'body.currency', message: 'is not a known ISO 4217 currency code' });
    if (details.length) throw invalid(details);

    const write = () => this.writePlatformPatch(actor, patch, locale);
    if (this.zoneMove && patch.timezone !== undefined && patch.timezone !== this.platform().timezone) return this.zoneMove.change(write);
    return write();
  }

  private writePlatformPatch(actor: AuthUser, patch: PlatformConfigPatch, locale: string | undefined): PlatformConfigView {
    return this.db.sqlite.transaction(() => {
      const before = this.platform();
      const next: PlatformConfigView = { ...before, ...patch, ...(locale ? { locale } : {}), updatedAt: new Date().toISOString() };
      const diff = auditChanges(before, next);
      if (!diff) return before;
      this.writePlatform.run(next);
      this.audit.record({ actor, action: 'update', resource: 'platform_config', resourceId: 1, ...diff });
      return this.platform();
    })();
  }

  threeD(): ThreeDConfigView {
    const row = this.selectScene.get() as ThreeDRow;
    return {
      cameraPreset: JSON.parse(row.cameraPreset) as CameraPreset,
      ambientIntensity: row.ambientIntensity,
      hotspots: JSON.parse(row.hotspots) as Hotspot[],
      labels: JSON.parse(row.labels) as SceneLabel[],
      modelFileId: row.modelFileId,
      modelUrl: row.modelStoredName ? MODEL_URL_PREFIX + encodeURIComponent(row.modelStoredName) : null,
      updatedAt: row.updatedAt,
    };
  }

  updateThreeD(actor: AuthUser, patch: ThreeDConfigPatch): ThreeDConfigView {
    const details = [...duplicateIds(patch.hotspots ?? [], 'body.hotspots'), ...duplicateIds(patch.labels ?? [], 'body.labels')];
    return this.db.sqlite.transaction(() => {
      if (patch.modelFileId != null && !this.modelExists.get(patch.modelFileId)) details.push({ path: 'body.modelFileId', message: 'is not the id of an uploaded model file' });
      if (details.length) throw invalid(details);
      const { modelUrl: _url, ...before } = this.threeD();
      const next = { ...before, ...patch, updatedAt: new Date().toISOString() };
      const diff = auditChanges(before, next);
      if (!diff) return this.threeD();
      this.writeScene.run({
        cameraPreset: JSON.stringify(next.cameraPreset),
        ambientIntensity: next.ambientIntensity,
        hotspots: JSON.stringify(next.hotspots),
        labels: JSON.stringify(next.labels),
        modelFileId: next.modelFileId,
        updatedAt: next.updatedAt,
      });
      this.audit.record({ actor, action: 'update', resource: 'three_d_config', resourceId: 1, ...diff });
      return this.threeD();
    })();
  }
}
