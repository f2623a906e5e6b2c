// The platform configuration and the 3D scene: single rows (id 1, seeded by migration), admin writes audited.
import type { TimeZoneMove } from '../metering/index.ts';
import { auditChanges } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { eq, getTableColumns } from 'drizzle-orm';
import { type CameraPreset, type Hotspot, platformConfig, type SceneLabel, threeDConfig } from '../platform/db/schema/settings.ts';
import { BadRequest, type ErrorDetail } from '../platform/errors.ts';
import { confirmFields, settingsAtDefaults, type SiteDefaultField } from './siteDefaults.ts';
import type { PlatformConfigPatch, PlatformConfigView, PriceInForce, ThreeDConfigPatch, ThreeDConfigView } from './schemas.ts';

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

/** ISO 4217 codes ICU knows; read at the first currency written, not at start (ICU data mapped in stays: issue 29). */
let currencies: Set<string> | undefined;
function isCurrency(code: string): boolean {
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return currencies.has(code);
}

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

type ThreeDRow = {
  cameraPreset: CameraPreset;
  ambientIntensity: number;
  hotspots: Hotspot[];
  labels: SceneLabel[];
  modelFileId: number | null;
  updatedAt: string;
};

/**
 * The port to the model files the scene names (files' sceneModels, handed in by the composition root: files owns
 * model_files, and site does not import files): a model's stored name by id, undefined when there is none.
 */
export type SceneModels = { storedName(modelId: number): string | undefined };

/** The row as stored: the view plus which defaults a person has confirmed (src/site/siteDefaults.ts). */
type PlatformRow = PlatformConfigView & { confirmedFields: string[] };

export class ConfigStore {
  private readonly selectPlatform;
  private readonly selectScene;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    /** The model files the scene names (a port). */
    private readonly models: SceneModels,
    /** Re-keys the stored energy when the time zone changes (src/metering/rezone.ts); none in tests of this table alone. */
    private readonly zoneMove?: Pick<TimeZoneMove, 'change'>,
    /**
     * The electricity price as the tariffs see it (energy's, issue 52): an entered price becomes the tariff from that day
     * while the site has no tariff of its own; the answer says which price is in force. None in tests of this table alone.
     */
    private readonly price?: { entered(price: number, actor: Actor): Promise<void>; inForce(): PriceInForce },
  ) {
    const { orm } = db;
    const { id: _id, ...platformColumns } = getTableColumns(platformConfig);
    this.selectPlatform = orm.select(platformColumns).from(platformConfig).where(eq(platformConfig.id, 1)).prepare();
    const { id: _sceneId, ...sceneColumns } = getTableColumns(threeDConfig);
    this.selectScene = orm.select(sceneColumns).from(threeDConfig).where(eq(threeDConfig.id, 1)).prepare();
  }

  platform(): PlatformConfigView {
    return this.selectPlatform.get() as PlatformConfigView;
  }

  /** Name, time zone and currency nobody has confirmed yet (set-up, PUT /api/configs, emsctl site set). */
  unconfirmed(): SiteDefaultField[] {
    return settingsAtDefaults((this.platform() as PlatformRow).confirmedFields);
  }

  async updatePlatform(actor: Actor, patch: PlatformConfigPatch): Promise<PlatformConfigView> {
    const details: ErrorDetail[] = [];
    if (patch.timezone !== undefined && !isTimeZone(patch.timezone))
      details.push({ path: 'body.timezone', message: 'is not a known IANA time zone (e.g. Europe/Berlin, UTC)' });
    let locale = patch.locale;
    if (locale !== undefined) {
      locale = canonicalLocale(locale);
      if (!locale) details.push({ path: 'body.locale', message: 'is not a valid BCP 47 language tag (e.g. en-US)' });
    }
    if (patch.currency !== undefined && !isCurrency(patch.currency)) details.push({ path: 'body.currency', message: 'is not a known ISO 4217 currency code' });
    if (details.length) throw invalid(details);

    const write = () => this.writePlatformPatch(actor, patch, locale);
    const written = this.zoneMove && patch.timezone !== undefined && patch.timezone !== this.platform().timezone ? await this.zoneMove.change(write) : write();
    // The price entered prices (the set-up's first screen asks for it): after the zone move, so that "today" is the new zone's.
    if (this.price && patch.electricityPrice !== undefined) await this.price.entered(patch.electricityPrice, actor);
    return written;
  }

  /** The electricity price in force today and where it comes from; null without the tariffs (tests of this table alone). */
  priceInForce(): PriceInForce | null {
    return this.price?.inForce() ?? null;
  }

  private writePlatformPatch(actor: Actor, patch: PlatformConfigPatch, locale: string | undefined): PlatformConfigView {
    return this.db.sqlite.transaction(() => {
      const before = this.platform() as PlatformRow;
      const confirmedFields = confirmFields(before.confirmedFields, patch);
      const next: PlatformRow = { ...before, ...patch, ...(locale ? { locale } : {}), confirmedFields, updatedAt: new Date().toISOString() };
      const diff = auditChanges(before, next);
      if (!diff) return before;
      const { updatedAt: _at, ...values } = next;
      this.db.orm
        .update(platformConfig)
        .set({ ...values, updatedAt: next.updatedAt })
        .where(eq(platformConfig.id, 1))
        .run();
      this.audit.record({ actor, action: 'update', resource: 'platform_config', resourceId: 1, ...diff });
      return this.platform();
    })();
  }

  threeD(): ThreeDConfigView {
    const row = this.selectScene.get() as ThreeDRow;
    const modelStoredName = row.modelFileId === null ? undefined : this.models.storedName(row.modelFileId);
    return { ...row, modelUrl: modelStoredName ? MODEL_URL_PREFIX + encodeURIComponent(modelStoredName) : null };
  }

  updateThreeD(actor: Actor, patch: ThreeDConfigPatch): ThreeDConfigView {
    const details = [...duplicateIds(patch.hotspots ?? [], 'body.hotspots'), ...duplicateIds(patch.labels ?? [], 'body.labels')];
    return this.db.sqlite.transaction(() => {
      if (patch.modelFileId != null && this.models.storedName(patch.modelFileId) === undefined)
        details.push({ path: 'body.modelFileId', message: 'is not the id of an uploaded model file' });
      if (details.length) throw invalid(details);
      const { modelUrl: _url, ...before } = this.threeD();
      const next = { ...before, ...patch, updatedAt: new Date().toISOString() };
      const diff = auditChanges(before, next);
      if (!diff) return this.threeD();
      this.db.orm
        .update(threeDConfig)
        .set({
          cameraPreset: next.cameraPreset,
          ambientIntensity: next.ambientIntensity,
          hotspots: next.hotspots,
          labels: next.labels,
          modelFileId: next.modelFileId,
          updatedAt: next.updatedAt,
        })
        .where(eq(threeDConfig.id, 1))
        .run();
      this.audit.record({ actor, action: 'update', resource: 'three_d_config', resourceId: 1, ...diff });
      return this.threeD();
    })();
  }
}
