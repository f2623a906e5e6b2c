// External programs (pdftotext, pdftoppm, pdffonts, …) run without blocking the test process. The service under test
// lives in that process: a synchronous run on a busy machine outlasts the service's 5 s keep-alive, and the next request
// on the pooled socket meets ECONNRESET (shared/reviews/newcomer-and-box.md, section 3).
import { execFile } from 'node:child_process';

/** The program's standard output as text; rejects with its standard error on a non-zero exit. */
export function runTool(file: string, args: string[], options: { input?: string | Buffer } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { message: `${file} ${args.join(' ')}: ${error.message}${stderr ? `\n${stderr}` : ''}` }));
      else resolve(stdout);
    });
    child.stdin?.end(options.input);
  });
}
