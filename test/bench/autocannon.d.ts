// The part of autocannon's API the benchmarks use (the package ships no types and there is no @types/autocannon).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: Record<string, unknown>, context: Record<string, unknown>) => Record<string, unknown> | undefined;
    }
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      overallRate?: number;
      requests?: Request[];
    }
    interface Result {
      non2xx: number;
      errors: number;
      timeouts: number;
      requests: { average: number; total: number };
      latency: { p50: number; p99: number; average: number };
      [key: string]: unknown;
    }
    type Instance = EventEmitter & PromiseLike<Result>;
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
