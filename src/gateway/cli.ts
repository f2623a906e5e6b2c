// What emsctl uses of gateway/ (emsctl gateway simulate): the built-in simulator. A face beside index.ts, for emsctl
// only, loaded lazily without the client and its module (docs/development.md, importGraph.test.ts).
export { startGatewaySimulator } from './simulator/server.ts';
