// "Send me a test mail" (POST /api/configs/test-mail): one message through the configured transport, and what became
// of it, so an admin sees in the first-run setup whether mail leaves the box at all.
import { deliveryOf, type Mailer } from '../platform/mail/mailer.ts';
import type { TestMailOutcome } from './schemas.ts';

export async function sendTestMail(mailer: Mailer, siteName: string, to: string): Promise<TestMailOutcome> {
  const smtpConfigured = mailer.delivers !== false;
  try {
    await mailer.send({
      to,
      subject: `EMS test mail from ${siteName}`,
      text: `This is a test mail from EMS at ${siteName}. If you read this, report mails and sign-in codes reach you.\n`,
    });
    return { to, smtpConfigured, delivery: deliveryOf(mailer), error: null };
  } catch (cause) {
    return { to, smtpConfigured, delivery: 'failed', error: (cause as Error).message };
  }
}
