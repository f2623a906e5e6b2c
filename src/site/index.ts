// The face of site/: what the other contexts use of it. Imports from outside site/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is site's own business.
export { CameraPreset, Hotspot, PlatformConfigUpdate, SceneLabel } from './schemas.ts';
export { ConfigStore, type SceneModels } from './service.ts';
export { sceneModelRef } from './sceneModelRef.ts';
export { settingsAtDefaults, type SiteDefaultField } from './siteDefaults.ts';
export { siteSettings, siteTimezone, unconfirmedSiteSettings, type SiteSettings } from './siteSettings.ts';
export { buildSite, siteRouteGroups } from './module.ts';
