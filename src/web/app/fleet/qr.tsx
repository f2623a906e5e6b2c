// A QR code drawn as SVG by Preact (lean-qr makes the modules; no innerHTML): the installer scans the line to type on
// the box (`emsctl fleet join <fleet URL> <code>`) from the administration screen instead of copying it by hand.
import { generate } from 'lean-qr/nano';
import { useMemo } from 'preact/hooks';

/** The quiet zone around the modules, in modules (the standard asks for 4). */
const QUIET = 4;

/** The dark modules of `text`'s QR code as one SVG path: each row's runs of dark modules, one rectangle per run. */
export function qrPath(text: string): { size: number; d: string } {
  const code = generate(text);
  const runs: string[] = [];
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; ) {
      if (!code.get(x, y)) {
        x++;
        continue;
      }
      const from = x;
      while (x < code.size && code.get(x, y)) x++;
      runs.push(`M${from} ${y}h${x - from}v1h-${x - from}z`);
    }
  }
  return { size: code.size, d: runs.join('') };
}

/** The QR code of `text`, dark on white whatever the theme (a scanner needs the contrast), named by `label`. */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, d } = useMemo(() => qrPath(text), [text]);
  const side = size + 2 * QUIET;
  return (
    <svg
      class="qr"
      viewBox={`${-QUIET} ${-QUIET} ${side} ${side}`}
      width={side * 4}
      height={side * 4}
      role="img"
      aria-label={label}
      data-text={text}
      shape-rendering="crispEdges"
    >
      <rect x={-QUIET} y={-QUIET} width={side} height={side} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
