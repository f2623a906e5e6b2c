// The face of app/: what the other contexts use of it. Imports from outside app/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is app's own business.
export { createService } from './compose.ts';
export { hostService, type Host } from './host.ts';
