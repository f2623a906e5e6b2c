// The site settings a new box starts with (migration 0001_seed): while they are unchanged, "today", report periods and
// money follow UTC days, euros and the name "EMS". /api/health and `emsctl status` name the ones still unchanged.
export const SITE_DEFAULTS = { siteName: 'EMS', timezone: 'UTC', currency: 'EUR' } as const;

export type SiteDefaultField = keyof typeof SITE_DEFAULTS;

/** The fields of name, time zone and currency that still hold the value the box started with (empty: all set). */
export function settingsAtDefaults(site: { siteName: string; timezone: string; currency: string }): SiteDefaultField[] {
  return (Object.keys(SITE_DEFAULTS) as SiteDefaultField[]).filter((field) => site[field] === SITE_DEFAULTS[field]);
}
