// Notification rules: an audited resource (admins write, operators read); the notifier reads the enabled ones.
import { desc } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import { AuditedTable } from '../../platform/db/auditedTable.ts';
import type { Db } from '../../platform/db/client.ts';
import type { PageResult } from '../../platform/db/listQuery.ts';
import { notificationRules } from '../../platform/db/schema/index.ts';
import { BadRequest } from '../../platform/errors.ts';
import type { NotificationRuleCreateInput, NotificationRuleUpdateInput, NotificationRuleView } from './schemas.ts';

export class NotificationRules {
  private readonly table;

  constructor(db: Db, audit: AuditLog) {
    this.table = new AuditedTable(db, audit, notificationRules, {
      resource: 'notification_rules',
      notFound: 'Notification rule not found',
      orderBy: [desc(notificationRules.id)],
      // Escalation needs both halves: a deadline and someone to escalate to.
      check: (next) => {
        if ((next.escalateAfterMin === null) !== (next.escalateTo.length === 0)) {
          throw new BadRequest('Invalid body', [{ path: 'body.escalateTo', message: 'escalateAfterMin and escalateTo go together' }]);
        }
      },
    });
  }

  page(page: number, pageSize: number): PageResult<NotificationRuleView> {
    return this.table.page([], page, pageSize);
  }

  get(id: number): NotificationRuleView {
    return this.table.get(id);
  }

  create(input: NotificationRuleCreateInput, actor: Actor): NotificationRuleView {
    return this.table.create({ area: null, escalateAfterMin: null, escalateTo: [], enabled: true, ...input }, actor);
  }

  update(id: number, input: NotificationRuleUpdateInput, actor: Actor): NotificationRuleView {
    return this.table.update(id, input, actor);
  }

  delete(id: number, actor: Actor): void {
    this.table.delete(id, actor);
  }
}
