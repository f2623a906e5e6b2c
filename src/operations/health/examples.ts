// The example answer of GET /api/health (issue 45 item 14): a real answer of a simulator box, as an admin sees it.

export const HEALTH_EXAMPLE = {
  status: 'ok',
  version: '0.1.0',
  uptimeSec: 10,
  database: 'ok',
  iot: {
    gateway: 'reachable',
    checkedAt: '2026-11-26T15:28:53.304Z',
    lastError: null,
    tokenAgeSec: 9,
    tokenExpiresInSec: 3590,
  },
  backup: {
    enabled: true,
    lastRunAt: null,
    lastStatus: null,
    lastGoodAt: null,
    target: 'off',
    drill: null,
  },
  fleet: {
    state: 'off',
    fleetUrl: null,
    unsentRows: 0,
    lastSuccessAt: null,
    lastError: null,
  },
  site: {
    defaults: ['siteName', 'timezone', 'currency'],
  },
  collector: {
    meters: 8,
    lastOkAt: '2026-11-26T15:28:53.305Z',
    lagSec: 0,
    state: 'ok',
    failingSince: null,
    metersNotOk: 0,
  },
  loadShedding: {
    shed: [],
    restoreFailing: [],
  },
  storageAlert: null,
};
