// The face of facility/: what the other contexts use of it. Imports from outside facility/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is facility's own business.
export { AlarmAreas, type AreaSources } from './alarmAreas/service.ts';
export { publicAlertTitle } from './alerts/publicTitle.ts';
export { AlertService, type AlertCounts, type GatewayAlarm } from './alerts/service.ts';
export { FaultService } from './faults/service.ts';
export { MaintenanceService } from './maintenance/service.ts';
export { AlarmNotifier } from './notifications/notifier.ts';
export { AlarmPoller } from './notifications/poller.ts';
export { NotificationRules } from './notifications/rules.ts';
export { buildFacility, facilityRouteGroups, type Facility, type FacilityNeeds } from './module.ts';
