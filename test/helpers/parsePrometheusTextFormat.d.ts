// parse-prometheus-text-format ships no types: its one export parses exposition text into metric families.
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
