// The meters' areas, read for facility's alarm areas (the port AreaSources): metering owns the meters table; facility
// is built before it, so the composition root hands it these.
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { meters } from '../platform/db/schema/index.ts';

/** The areas the meters count towards, and the area of the meter reading a gateway point; prepared once. */
export function meterAreas(db: Db): { meterAreas(): string[]; meterArea(code: string): string | null } {
  const names = db.orm.selectDistinct({ name: meters.area }).from(meters).where(isNotNull(meters.area)).prepare();
  const ofCode = db.orm
    .select({ area: meters.area })
    .from(meters)
    .where(and(eq(meters.code, sql.placeholder('code')), isNotNull(meters.area)))
    .prepare();
  return {
    meterAreas: () => names.all().map((row) => row.name as string),
    meterArea: (code) => ofCode.get({ code })?.area ?? null,
  };
}
