// The site's time zone, read in one place: site days, the energy calendar and the cards' "today" all start from it.
import { eq } from 'drizzle-orm';
import type { Db } from './client.ts';
import { platformConfig } from './schema/index.ts';

/** A reader of the configured IANA zone (platform_config row 1), read on each call: a zone change counts at once. */
export function siteTimezone(db: Db): () => string {
  const query = db.orm.select({ timezone: platformConfig.timezone }).from(platformConfig).where(eq(platformConfig.id, 1)).prepare();
  return () => query.get()!.timezone;
}
