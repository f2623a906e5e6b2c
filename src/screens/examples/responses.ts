// Example answers of the dashboard and overview routes (issue 45 item 14): real answers of a simulator box, lists cut
// to two entries, the site named as an example. test/platform/responseExamples.test.ts checks them against the schemas.

export const OVERVIEW_WEEKLY_EXAMPLE = {
  days: [
    {
      day: '2026-11-20',
      kwh: 4171.87,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-21',
      kwh: 2804.21,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-22',
      kwh: 2366.18,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-23',
      kwh: 3421.43,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-24',
      kwh: 3344.05,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-25',
      kwh: 3506.52,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-26',
      kwh: 2406.05,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
  ],
  totalKwh: 22020.31,
  completeness: {
    measured: 1,
    estimated: 0,
    missing: 0,
  },
  timezone: 'UTC',
};

export const DASHBOARD_EXAMPLE = {
  platform: {
    siteName: 'Example Office Park',
    logoUrl: null,
    timezone: 'UTC',
    locale: 'en-US',
    currency: 'EUR',
    refreshIntervalSec: 30,
  },
  overview: {
    activeAlerts: 4,
    criticalAlerts: 1,
    openFaults: 1,
    maintenanceDue: 1,
    maintenanceOverdue: 0,
    currency: 'EUR',
    energyTodayKwh: 2406.05,
    energyMonthKwh: 23301.42,
    powerKw: 177.515,
    costToday: 601.51,
    carbonTodayKg: 962.42,
    costMonth: 5825.36,
    carbonMonthKg: 9320.568,
    generatedAt: '2026-11-26T15:28:53.398Z',
    demandChargeMonth: 0,
    coverage: {
      today: 1,
      month: 0.273,
    },
    comparison: {
      todayVsYesterdayPercent: 0.02,
      todayVsLastYearPercent: null,
      monthVsPreviousPercent: null,
      complete: false,
    },
    commodities: [
      {
        commodity: 'electricity',
        unit: 'kWh',
        quantity: 24234.387,
        kwh: 24234.387,
        cost: 5825.36,
      },
      {
        commodity: 'gas',
        unit: 'm³',
        quantity: 1926.77,
        kwh: 21674.313,
        cost: null,
      },
      {
        commodity: 'water',
        unit: 'm³',
        quantity: 87.348,
        kwh: null,
        cost: null,
      },
    ],
  },
  // The dashboard carries the overview's weekly answer as it is.
  weeklyEnergy: OVERVIEW_WEEKLY_EXAMPLE,
  areas: [
    {
      name: 'HVAC',
      todayKwh: 1018.72,
      monthKwh: 10574.63,
      yearKwh: 10574.63,
      powerKw: 53.254,
      updatedAt: '2026-11-26T15:28:43.380Z',
    },
    {
      name: 'Lighting',
      todayKwh: 306.28,
      monthKwh: 2230.95,
      yearKwh: 2230.95,
      powerKw: 35.503,
      updatedAt: '2026-11-26T15:28:43.380Z',
    },
  ],
  scene: {
    cameraPreset: {
      position: {
        x: 30,
        y: 30,
        z: 30,
      },
      target: {
        x: 0,
        y: 0,
        z: 0,
      },
      fov: 50,
    },
    ambientIntensity: 0.6,
    hotspots: [],
    labels: [],
    modelUrl: null,
  },
  recentAlerts: [
    {
      id: 3,
      title: 'Alarm on meter.it.kwh',
      level: 'warning',
      status: 'active',
      area: 'Server room',
      occurredAt: '2026-11-24T22:00:00.000Z',
    },
    {
      id: 4,
      title: 'Alarm on temp.serverroom',
      level: 'critical',
      status: 'active',
      area: 'Server room',
      occurredAt: '2026-11-23T22:00:00.000Z',
    },
  ],
  alertCounts: {
    info: 1,
    warning: 2,
    critical: 1,
  },
  gateway: {
    state: 'up',
    checkedAt: '2026-11-26T15:28:53.304Z',
    dataAt: '2026-11-26T15:28:53.305Z',
  },
  generatedAt: '2026-11-26T15:28:53.398Z',
};

export const DASHBOARD_ALERTS_EXAMPLE = {
  items: [
    {
      id: 4,
      title: 'Server room temperature above 27 °C',
      message: 'Gateway alarm on temp.serverroom',
      level: 'critical',
      source: 'temp.serverroom',
      area: 'Server room',
      status: 'active',
      occurredAt: '2026-11-23T22:00:00.000Z',
      acknowledgedAt: null,
      resolvedAt: null,
    },
  ],
  total: 1,
  page: 1,
  pageSize: 20,
};

export const OVERVIEW_STATS_EXAMPLE = {
  activeAlerts: 4,
  criticalAlerts: 1,
  openFaults: 1,
  maintenanceDue: 1,
  maintenanceOverdue: 0,
  currency: 'EUR',
  energyTodayKwh: 2406.05,
  energyMonthKwh: 23301.42,
  powerKw: 177.515,
  costToday: 601.51,
  carbonTodayKg: 962.42,
  costMonth: 5825.36,
  carbonMonthKg: 9320.568,
  generatedAt: '2026-11-26T15:28:53.506Z',
  demandChargeMonth: 0,
  coverage: {
    today: 1,
    month: 0.273,
  },
  comparison: {
    todayVsYesterdayPercent: 0.02,
    todayVsLastYearPercent: null,
    monthVsPreviousPercent: null,
    complete: false,
  },
  commodities: [
    {
      commodity: 'electricity',
      unit: 'kWh',
      quantity: 24234.387,
      kwh: 24234.387,
      cost: 5825.36,
    },
    {
      commodity: 'gas',
      unit: 'm³',
      quantity: 1926.77,
      kwh: 21674.313,
      cost: null,
    },
    {
      commodity: 'water',
      unit: 'm³',
      quantity: 87.348,
      kwh: null,
      cost: null,
    },
  ],
};
