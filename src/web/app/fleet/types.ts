// The fleet API's answers as the portfolio screens read them (src/fleet/portfolio.ts and app.ts answer them; the fleet has
// no OpenAPI document, so these are kept by hand; test/web/fleetPortfolio.test.ts compares the screens with the API).
export type HealthGrade = 'healthy' | 'warning' | 'stale';
export type HealthReason = 'never' | 'revoked' | 'lag' | 'refusing' | 'clock' | 'skew' | 'completeness' | 'backup';

export type SiteHealth = {
  id: string;
  /** The name given at enrolment; `boxName` is what the box calls itself. */
  name: string;
  boxName: string | null;
  installId: string | null;
  status: 'ok' | 'stale' | 'refusing' | 'clock' | 'revoked' | 'never';
  lastContactAt: string | null;
  syncLagSec: number | null;
  unsentRows: number | null;
  clockSkewSec: number | null;
  completeness: number | null;
  version: string | null;
  lastBackupAgeSec: number | null;
  lastRefusal: string | null;
  openAlerts: number;
  grade: HealthGrade;
  reasons: HealthReason[];
};

export type EuiRow = {
  id: string;
  name: string;
  floorAreaM2: number | null;
  eui: number | null;
  euiLastYear: number | null;
  change: number | null;
  byCommodity: Record<string, { eui: number | null; euiLastYear: number | null; kwh: number; kwhLastYear: number }>;
  rank: number | null;
};

export type FleetAlert = {
  siteId: string;
  siteName: string;
  source: 'site' | 'fleet';
  id: string;
  title: string;
  level: string;
  status: string;
  occurredAt: string;
};

export type AlertPage = { items: FleetAlert[]; total: number; page: number; pageSize: number };
/** GET /api/fleet/sites: a page of the health list (stale first), the whole list's size and grade counts. */
export type HealthPage = { items: SiteHealth[]; total: number; page: number; pageSize: number; counts: Record<HealthGrade, number> };
/** GET /api/fleet/eui: a page of the ranking, the whole list's size and its highest EUI. */
export type EuiPage = { items: EuiRow[]; total: number; page: number; pageSize: number; maxEui: number | null };

export type FleetMeter = {
  key: string;
  name: string;
  commodity: string;
  unit: string;
  area: string | null;
  siteTotal: boolean;
  last30Days: number | null;
  last30DaysKwh: number | null;
  last30DaysCost: number | null;
};

export type FleetUser = { name: string; role: 'viewer' | 'admin'; sites: string[] | null };
