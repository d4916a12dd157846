/**
 * What the cloud stack gives the pipeline's functions (lib/constructs: Deliver and Fanout),
 * for the benchmarks' cost figures: memory (GB-seconds), X-Ray tracing (traces) and the
 * system log level (Lambda's own START/END/REPORT lines). test/cdk/bench-memory.test.ts
 * checks these against the synthesized template, so a change there cannot leave the
 * benchmarks pricing something else.
 */
export const FUNCTION_MEMORY_MB = { Deliver: 256, Fanout: 256 } as const;
export const FUNCTION_TRACING = { Deliver: 'PassThrough', Fanout: 'PassThrough' } as const;
export const FUNCTION_SYSTEM_LOG_LEVEL = { Deliver: 'WARN', Fanout: 'WARN' } as const;
