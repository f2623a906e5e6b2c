// The face of site/: what the other contexts use of it. Imports from outside site/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is site's own business.
export { CameraPreset, Hotspot, SceneLabel } from './schemas.ts';
export { ConfigStore } from './service.ts';
export { settingsAtDefaults, type SiteDefaultField } from './siteDefaults.ts';
export { siteSettings, siteTimezone, unconfirmedSiteSettings, type SiteSettings } from './siteSettings.ts';
export { buildSite, siteRouteGroups } from './module.ts';
