// The site's time zone and currency, read in one place: site days, the energy calendar and the cards' "today" all start from it.
import type Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { Kept } from '../platform/db/kept.ts';
import { platformConfig } from '../platform/db/schema/index.ts';
import { settingsAtDefaults, type SiteDefaultField } from './siteDefaults.ts';

/**
 * The platform settings every energy figure reads (its zone, currency and the cards' price and carbon factor), and what
 * other contexts ask of the site: its name, the locale files are written in, its floor area (EnPIs per m²), the
 * dashboards' default refresh.
 */
export type SiteSettings = {
  timezone: string;
  currency: string;
  electricityPrice: number;
  carbonFactor: number;
  siteName: string;
  locale: string;
  floorAreaM2: number | null;
  /** How often a dashboard without its own settings reloads. */
  refreshIntervalSec: number;
};

const perConnection = new WeakMap<Database.Database, () => SiteSettings>();

/**
 * A reader of the configured IANA zone, currency, price and carbon factor (platform_config row 1), one per connection. Kept until
 * platform_config is written here or another connection commits (src/platform/db/kept.ts), so a zone change counts at once;
 * a statement per call was two of the energy cards' reads a request (~15 % of /api/energy/areas at 2,000 meters).
 */
export function siteSettings(db: Db): () => SiteSettings {
  let read = perConnection.get(db.sqlite);
  if (!read) {
    const query = db.orm
      .select({
        timezone: platformConfig.timezone,
        currency: platformConfig.currency,
        electricityPrice: platformConfig.electricityPrice,
        carbonFactor: platformConfig.carbonFactor,
        siteName: platformConfig.siteName,
        locale: platformConfig.locale,
        floorAreaM2: platformConfig.floorAreaM2,
        refreshIntervalSec: platformConfig.refreshIntervalSec,
      })
      .from(platformConfig)
      .where(eq(platformConfig.id, 1))
      .prepare();
    const kept = new Kept<SiteSettings>(db.sqlite, { name: 'site.settings', tables: ['platform_config'], max: 1 });
    read = () => kept.get('', () => query.get()!);
    perConnection.set(db.sqlite, read);
  }
  return read;
}

/** The configured IANA zone (see siteSettings). */
export function siteTimezone(db: Db): () => string {
  const settings = siteSettings(db);
  return () => settings().timezone;
}

/** A reader of the name, time zone and currency nobody has confirmed yet (src/site/siteDefaults.ts), for /api/health. */
export function unconfirmedSiteSettings(db: Db): () => SiteDefaultField[] {
  const query = db.orm.select({ confirmed: platformConfig.confirmedFields }).from(platformConfig).where(eq(platformConfig.id, 1)).prepare();
  return () => settingsAtDefaults(query.get()?.confirmed ?? []);
}
