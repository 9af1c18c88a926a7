declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
