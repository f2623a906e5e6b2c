// What emsctl uses of metering/ (emsctl site set --timezone with the service stopped): the time-zone move, recorded
// for the next start. A face beside index.ts, for emsctl only, loaded lazily (docs/development.md, importGraph.test.ts).
export { scheduleZoneMove } from './rezone.ts';
