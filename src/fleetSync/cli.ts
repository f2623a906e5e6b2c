// What emsctl uses of fleetSync/ (emsctl fleet join | status | leave, emsctl status): the link. A face beside index.ts,
// for emsctl only, loaded lazily without the sync job and its module (docs/development.md, importGraph.test.ts).
export { FleetJoinError, joinFleet, leaveFleet, syncState } from './link.ts';
