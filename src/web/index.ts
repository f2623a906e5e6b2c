// The face of web/: what the other contexts use of it. Imports from outside web/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is web's own business.
export { fleetStaffApp, staffApp } from './serve.ts';
