// Sends a request line exactly as given (fetch would normalise "..", "//" and percent-encoding away).
import http from 'node:http';

export function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const allHeaders = body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers };
    const request = http.request({ host: hostname, port, method, path: rawPath, headers: allHeaders }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}
