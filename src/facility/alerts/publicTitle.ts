// The one rule for an alert's title on a payload anyone may read without a token (/api/dashboard, /api/wallboard for
// the site and each area): a gateway alarm's title is the gateway's own alarm text, which may name people, badges,
// tenants or faults in detail, so the public payload names only the point it is on ("Alarm on door.badge"). Alerts
// people wrote keep their title. Every alert raised from a key (alarm_key set: gateway alarms and the service's own
// gateway-style alerts) counts as a gateway alarm here. test/screens/publicAlertTitles.test.ts checks each public payload.
import { sql } from 'drizzle-orm';
import { alerts } from '../../platform/db/schema/index.ts';

/** The SQL expression for an alert's public title (select it as `title`). */
export function publicAlertTitle() {
  return sql<string>`CASE WHEN ${alerts.alarmKey} IS NULL THEN ${alerts.title} ELSE 'Alarm on ' || coalesce(${alerts.source}, 'the gateway') END`;
}
