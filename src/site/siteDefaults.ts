// The site settings a new box starts with (migration 0001_seed): until someone confirms them, "today", report periods and
// money follow UTC days, euros and the name "EMS". /api/health and `emsctl status` name the ones nobody has confirmed:
// a default is a value nobody chose, not a value that happens to match (a euro site that confirmed EUR is set up).
export const SITE_DEFAULTS = { siteName: 'EMS', timezone: 'UTC', currency: 'EUR' } as const;

export type SiteDefaultField = keyof typeof SITE_DEFAULTS;

const FIELDS = Object.keys(SITE_DEFAULTS) as SiteDefaultField[];

/** The fields of name, time zone and currency nobody has confirmed yet (empty: all set), from platform_config.confirmed_fields. */
export function settingsAtDefaults(confirmedFields: readonly string[]): SiteDefaultField[] {
  return FIELDS.filter((field) => !confirmedFields.includes(field));
}

/** The confirmed fields after a change that names `patch`'s fields: naming a field confirms it, even at its old value. */
export function confirmFields(confirmedFields: readonly string[], patch: Partial<Record<SiteDefaultField, unknown>>): string[] {
  return FIELDS.filter((field) => confirmedFields.includes(field) || patch[field] !== undefined);
}
