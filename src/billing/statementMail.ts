// Mailing an issued run's statements: each tenant with a contact gets its statement, PDF and XLSX attached.
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { statementFileName, statementPdf, statementTitle, statementXlsx, XLSX } from './documents.ts';
import type { Billing } from './service.ts';

export class StatementMail {
  constructor(
    private readonly statements: Pick<Billing, 'run' | 'statement'>,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {}

  /** Mails each statement of an issued run with a contact, PDF and XLSX attached; a failure is logged, the run stays issued. */
  async sendRun(runId: number): Promise<void> {
    try {
      for (const { id } of this.statements.run(runId).statements) {
        const statement = this.statements.statement(id);
        if (!statement.tenant.contactEmail) continue;
        await this.mailer.send({
          to: statement.tenant.contactEmail,
          subject: statementTitle(statement),
          text: `${statementTitle(statement)}\nTotal: ${(statement.totalCents / 100).toFixed(2)} ${statement.currency}\n\nThe statement is attached as PDF and XLSX.`,
          attachments: [
            { filename: statementFileName(statement, 'pdf'), content: await statementPdf(statement), contentType: 'application/pdf' },
            { filename: statementFileName(statement, 'xlsx'), content: await statementXlsx(statement), contentType: XLSX },
          ],
        });
      }
    } catch (error) {
      // The run stays issued; its statements can be downloaded and sent by hand.
      this.logger.error({ err: error, runId }, 'billing statements could not all be mailed');
    }
  }
}
