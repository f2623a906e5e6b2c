// Splits a captured multipart message into its attachments (file name, type, decoded bytes) without a MIME library.
export type MailPart = { filename: string; contentType: string; content: Buffer };

export function attachmentsOf(raw: string): MailPart[] {
  const boundaries = [...raw.matchAll(/boundary="?([^"\r\n;]+)"?/gi)].map((match) => match[1]);
  const parts: MailPart[] = [];
  for (const boundary of boundaries) {
    for (const chunk of raw.split(`--${boundary}`)) {
      const split = chunk.indexOf('\r\n\r\n');
      if (split < 0) continue;
      const headers = chunk.slice(0, split);
      const filename = /filename\*?=(?:utf-8'')?"?([^"\r\n;]+)"?/i.exec(headers)?.[1];
      if (!filename || !/Content-Disposition:\s*attachment/i.test(headers)) continue;
      const body = chunk.slice(split + 4).replace(/\r\n$/, '');
      const base64 = /Content-Transfer-Encoding:\s*base64/i.test(headers);
      const contentType = /Content-Type:\s*([^;\r\n]+)/i.exec(headers)?.[1] ?? '';
      parts.push({
        filename: decodeURIComponent(filename),
        contentType,
        content: base64 ? Buffer.from(body.replace(/\s+/g, ''), 'base64') : Buffer.from(body),
      });
    }
  }
  return parts;
}
