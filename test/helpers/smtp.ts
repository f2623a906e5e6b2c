// A real SMTP server (npm smtp-server) on 127.0.0.1 that keeps every message, so tests read the emailed codes.
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { patience } from './patience.ts';

export type CapturedMail = { to: string[]; raw: string };

export type MailCatcher = {
  url: string;
  messages: CapturedMail[];
  /** Waits for the next message to this address and returns the 6-digit code in it. */
  codeFor(email: string, options?: { after?: number; timeoutMs?: number }): Promise<string>;
  close(): Promise<void>;
};

/** `hold`: each message is kept at the end of DATA until the test calls the release it was handed. */
export async function startMailCatcher(options: { hold?: (release: () => void) => void } = {}): Promise<MailCatcher> {
  const messages: CapturedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const accept = () => {
          messages.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw: Buffer.concat(chunks).toString('utf8') });
          waiters.splice(0).forEach((wake) => wake());
          callback();
        };
        if (options.hold) options.hold(accept);
        else accept();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  const find = (email: string, after: number) => messages.slice(after).find((message) => message.to.includes(email.toLowerCase()));

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async codeFor(email, options = {}) {
      const after = options.after ?? 0;
      const deadline = Date.now() + (options.timeoutMs ?? 5000) * patience();
      for (;;) {
        const message = find(email, after);
        if (message) {
          const match = /\b(\d{6})\b/.exec(message.raw);
          if (!match) throw new Error('message without a 6-digit code');
          return match[1];
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${email}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
