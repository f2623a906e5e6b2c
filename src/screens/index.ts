// The face of screens/: what the other contexts use of it. Imports from outside screens/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is screens's own business.
export { DashboardService } from './dashboard/service.ts';
export { OverviewService } from './overview/service.ts';
export { wallboardPages } from './wallboard/routes.ts';
export { WallboardService } from './wallboard/service.ts';
export { buildScreens, screensRouteGroups, type Screens, type ScreensNeeds } from './module.ts';
