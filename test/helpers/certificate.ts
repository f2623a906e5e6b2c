// A self-signed certificate made by the openssl CLI, for the tests that serve HTTPS (EMS_TLS_CERT / EMS_TLS_KEY).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** `<dir>/<name>.crt` and `.key`: an EC P-256 key, two days valid, CN=name, for the given subjectAltName. */
export function selfSignedCertificate(dir: string, name: string, subjectAltName = 'IP:127.0.0.1'): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${subjectAltName}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}
