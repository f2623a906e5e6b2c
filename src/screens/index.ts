// The face of screens/: what the other contexts use of it. Imports from outside screens/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is screens's own business.
export { dashboardRoutes } from './dashboard/routes.ts';
export { DashboardService } from './dashboard/service.ts';
export { overviewRoutes } from './overview/routes.ts';
export { OverviewService } from './overview/service.ts';
export { wallboardPages, wallboardRoutes } from './wallboard/routes.ts';
export { WallboardService } from './wallboard/service.ts';
export { buildScreens, type Screens, type ScreensNeeds } from './module.ts';
