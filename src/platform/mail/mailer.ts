// Outgoing mail through nodemailer; with no SMTP configured the message goes to the log with a warning instead.
import type { Transporter } from 'nodemailer';
import type { Logger } from '../logger.ts';

export type MailAttachment = { filename: string; content: Buffer; contentType: string };

export type Mail = { to: string | string[]; subject: string; text: string; attachments?: MailAttachment[] };

export type Mailer = {
  send(mail: Mail, logFallback?: Record<string, unknown>): Promise<void>;
  close(): void;
};

export function createMailer(options: { smtpUrl?: string; from: string; logger: Logger }): Mailer {
  const { smtpUrl, from, logger } = options;
  if (!smtpUrl) {
    return {
      async send(mail, logFallback) {
        // The documented fallback: the only place a verification code may appear in the log.
        const attachments = mail.attachments?.map(({ filename, content }) => ({ filename, sizeBytes: content.length }));
        logger.warn(
          { to: mail.to, subject: mail.subject, ...(attachments && { attachments }), ...logFallback },
          'EMS_SMTP_URL is not set: mail written to the log instead of sent',
        );
      },
      close() {},
    };
  }
  // nodemailer is loaded with the first mail (~6 MiB of resident memory an idle appliance does not need).
  let transport: Promise<Transporter> | undefined;
  return {
    async send(mail) {
      transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl));
      await (await transport).sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, attachments: mail.attachments });
    },
    close() {
      void transport?.then((opened) => opened.close());
    },
  };
}
