// What emsctl uses of site/ (emsctl site show | set, emsctl status): the settings store and which settings are still
// the defaults. A face beside index.ts, for emsctl only, loaded lazily without the routes and their schemas (`site set`
// takes the API's schema from index.ts; docs/development.md, importGraph.test.ts).
export { ConfigStore } from './service.ts';
export { settingsAtDefaults } from './siteDefaults.ts';
