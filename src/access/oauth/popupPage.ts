// The page the provider's popup lands on: it hands the outcome to window.opener at the configured origins and closes.
import { randomBytes } from 'node:crypto';
import type { CallbackOutcome } from './schemas.ts';

/** JSON that is also safe inside an inline <script>: no "</script>", no "<!--", no line separators that end JS strings. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export type PopupPage = { html: string; contentSecurityPolicy: string };

/**
 * Posts the callback's outcome (the staff app reads it as `PopupOutcome`, src/web/app/api/types.ts: the same type, from
 * the generated schema). targetOrigins are concrete origins (the dashboard's or the service's own), never '*': a token
 * pair posted to '*' would reach whatever page opened the popup.
 */
export function popupPage(message: CallbackOutcome, targetOrigins: string[]): PopupPage {
  if (targetOrigins.length === 0 || targetOrigins.some((origin) => !origin || origin === '*')) throw new Error('the popup needs concrete target origins');
  const nonce = randomBytes(16).toString('base64');
  // Posted once per allowed origin: the browser drops every post whose target is not the opener's origin.
  const script = `(function () {
  var message = ${scriptSafeJson(message)};
  var targetOrigins = ${scriptSafeJson(targetOrigins)};
  if (window.opener && !window.opener.closed) {
    for (var i = 0; i < targetOrigins.length; i += 1) {
      try { window.opener.postMessage(message, targetOrigins[i]); } catch (e) {}
    }
    window.close();
  } else {
    document.getElementById('status').textContent = 'Sign-in finished, but the window that started it is gone. Close this window and sign in again.';
  }
})();`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>EMS sign-in</title>
</head>
<body>
<p id="status">Finishing sign-in&hellip; you can close this window.</p>
<script nonce="${nonce}">
${script}
</script>
</body>
</html>
`;
  const contentSecurityPolicy = ["default-src 'none'", `script-src 'nonce-${nonce}'`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join(
    '; ',
  );
  return { html, contentSecurityPolicy };
}
