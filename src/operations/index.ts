// The face of operations/: what the other contexts use of it. Imports from outside operations/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is operations's own business.
export { holdServiceLock } from './backup/locks.ts';
export { BackupScheduler } from './backup/service.ts';
export { applyPendingRestore, auditRestore } from './backup/guidedRestore.ts';
export { gatewayCondition, publicGatewayState } from './health/gatewayCondition.ts';
export { Metrics } from './metrics/service.ts';
export { buildOperations, operationsRouteGroups, type Operations, type OperationsNeeds } from './module.ts';
