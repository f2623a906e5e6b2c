// Example answers of the energy routes (issue 45 item 14), shaped on real answers of a simulator box (example figures).

export const ENERGY_AREAS_EXAMPLE = {
  areas: [
    {
      id: 1,
      name: 'HVAC',
      todayKwh: 1018.41,
      monthKwh: 10574.32,
      yearKwh: 10574.32,
      powerKw: 53.946,
      createdAt: '2026-01-02T09:00:00.000Z',
      updatedAt: '2026-01-02T09:00:00.000Z',
      source: 'meters',
    },
    {
      id: 3,
      name: 'Server room',
      todayKwh: 594.78,
      monthKwh: 6363.03,
      yearKwh: 6363.03,
      powerKw: 35.503,
      createdAt: '2026-01-02T09:00:00.000Z',
      updatedAt: '2026-01-02T09:00:00.000Z',
      source: 'meters',
    },
  ],
  unallocated: { todayKwh: 412.2, monthKwh: 4120.5, yearKwh: 4120.5 },
};

export const ENERGY_SERIES_EXAMPLE = {
  resolution: 'day',
  timezone: 'Europe/Berlin',
  points: [
    { start: '2026-01-11T23:00:00.000Z', kwh: 3344.05, cost: 836.01, missing: 0, estimated: 0 },
    { start: '2026-01-12T23:00:00.000Z', kwh: 3506.52, cost: 876.63, missing: 0, estimated: 0.0104 },
  ],
};

export const ENERGY_SUMMARY_EXAMPLE = {
  from: '2026-11-24',
  to: '2026-11-26',
  timezone: 'UTC',
  currency: 'EUR',
  totalKwh: 6850.57,
  cost: 1712.64,
  carbonKg: 2740.228,
  days: [
    {
      day: '2026-11-24',
      kwh: 3344.05,
      cost: 836.01,
      carbonKg: 1337.62,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
    {
      day: '2026-11-25',
      kwh: 3506.52,
      cost: 876.63,
      carbonKg: 1402.608,
      measured: 1,
      estimated: 0,
      missing: 0,
    },
  ],
  areas: [
    {
      area: 'HVAC',
      kwh: 2971.2,
      cost: 742.8,
      carbonKg: 1188.48,
    },
    {
      area: 'Server room',
      kwh: 1189.56,
      cost: 297.39,
      carbonKg: 475.824,
    },
  ],
  peak: {
    kw: 238.56,
    at: '2026-11-24T08:00:00.000Z',
    complete: true,
    incompleteIntervals: 0,
    metersAtPeak: 1,
    meters: 1,
  },
  completeness: {
    intervals: 192,
    measured: 1,
    estimated: 0,
    missing: 0,
  },
};
