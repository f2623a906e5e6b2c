// The face of faultDetection/: what the other contexts and the composition root use of it. Imports from outside
// faultDetection/ come through this file (test/structure/importGraph.test.ts).
export { buildFaultDetection, faultDetectionRouteGroups, type FaultDetection, type FaultDetectionNeeds } from './module.ts';
