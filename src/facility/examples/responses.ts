// Example answers of the facility routes (issue 45 item 14), shaped on real answers of a simulator box: obviously example
// data (example.com, J. Smith). test/platform/responseExamples.test.ts checks each against its route's success schema.
import { pageExample } from '../../platform/http/schemas.ts';

export const ALERT_EXAMPLE = {
  id: 42,
  title: 'Server room temperature above 27 °C',
  message: 'Gateway alarm on temp.serverroom',
  level: 'critical',
  source: 'temp.serverroom',
  area: 'Server room',
  status: 'acknowledged',
  occurredAt: '2026-01-14T22:00:00.000Z',
  acknowledgedAt: '2026-01-14T22:07:31.000Z',
  acknowledgedBy: 3,
  resolvedAt: null,
  resolvedBy: null,
  alarmKey: 'temp.serverroom@2026-01-14T22:00:00.000Z',
  clearedAt: '2026-01-14T22:30:00.000Z',
  shelvedUntil: null,
  shelvedBy: null,
  shelveReason: null,
  createdAt: '2026-01-14T22:00:04.512Z',
  updatedAt: '2026-01-14T22:30:03.118Z',
};
export const ALERT_PAGE_EXAMPLE = pageExample(ALERT_EXAMPLE, 1);

export const FAULT_EXAMPLE = {
  id: 7,
  device: 'AHU-3',
  code: 'E42',
  description: 'Fan belt slipping',
  severity: 'medium',
  status: 'in_progress',
  area: 'HVAC',
  assignee: 'J. Smith',
  reportedAt: '2026-01-12T09:15:00.000Z',
  resolvedAt: null,
  createdAt: '2026-01-12T09:15:02.341Z',
  updatedAt: '2026-01-12T10:02:47.906Z',
};
export const FAULT_PAGE_EXAMPLE = pageExample(FAULT_EXAMPLE);

export const MAINTENANCE_EXAMPLE = {
  id: 12,
  equipment: 'Chiller 2',
  type: 'preventive',
  description: 'Quarterly service',
  status: 'planned',
  scheduledAt: '2026-02-01T08:00:00.000Z',
  completedAt: null,
  assignee: 'J. Smith',
  cost: null,
  faultId: null,
  alertId: null,
  createdAt: '2026-01-10T14:21:09.774Z',
  updatedAt: '2026-01-10T14:21:09.774Z',
};
export const MAINTENANCE_PAGE_EXAMPLE = pageExample(MAINTENANCE_EXAMPLE);
