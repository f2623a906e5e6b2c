// The energy-management pieces (comparisons, demand charges, baselines, EnPIs, anomalies), built once on the energy feature.
import type { Energy } from '../energy/index.ts';
import type { GatewayPort } from '../gateway/index.ts';
import type { AlertService } from '../facility/index.ts';
import type { Db } from '../platform/db/client.ts';
import { Baselines } from './baselines.ts';
import { HourlyBaselines } from './hourlyBaselines.ts';
import { Enpis } from './enpi.ts';
import { AnomalyWatch } from './anomalies.ts';
import type { Logger } from '../platform/logger.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import { OutdoorTemperatures } from './weather.ts';
import { Comparisons } from './comparisons.ts';
import { DemandCharges } from './demandCharges.ts';
import { PeakWarnings } from './peakWarnings.ts';
import { LoadSheddingConfig } from './loadShedding.ts';

export type Analysis = {
  comparisons: Comparisons;
  demandCharges: DemandCharges;
  peakWarnings: PeakWarnings;
  loadShedding: LoadSheddingConfig;
  baselines: (iot: Pick<GatewayPort, 'history'>) => Baselines;
  hourlyBaselines: (iot: Pick<GatewayPort, 'history'>) => HourlyBaselines;
  enpis: (iot: Pick<GatewayPort, 'history'>) => Enpis;
  anomalies: (iot: Pick<GatewayPort, 'history'>, alerts: Pick<AlertService, 'fromGatewayAlarm'>, logger: Logger) => AnomalyWatch;
};

export function buildAnalysis(db: Db, audit: AuditLog, energy: Energy): Analysis {
  return {
    comparisons: new Comparisons(db, energy.figures, energy.tariffs),
    demandCharges: new DemandCharges(energy.figures, energy.tariffs),
    peakWarnings: new PeakWarnings(db),
    loadShedding: new LoadSheddingConfig(db, audit),
    // The gateway is started after the features are built: baselines get it when the routes are.
    baselines: (iot) => new Baselines(db, energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
    hourlyBaselines: (iot) => new HourlyBaselines(energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
    enpis: (iot) => new Enpis(db, audit, energy.figures, new OutdoorTemperatures(db, iot, energy.timezone), energy.commodities),
    anomalies: (iot, alerts, logger) =>
      new AnomalyWatch({
        energy: energy.site,
        baselines: new Baselines(db, energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
        hourlyBaselines: new HourlyBaselines(energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
        alerts,
        logger,
      }),
  };
}
