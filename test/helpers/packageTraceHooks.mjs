// Module loader hooks for packageTrace.mjs.
import fs from 'node:fs';

let file;

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, next) {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match && file) fs.appendFileSync(file, `${match[1]}\n`);
  return next(url, context);
}
