/**
 * The memory the cloud stack gives the pipeline's functions (lib/constructs: Deliver and
 * Fanout take ServiceFunction's default), for the benchmarks' GB-second figures.
 * test/cdk/bench-memory.test.ts checks these against the synthesized template, so a
 * change there cannot leave the benchmarks pricing the wrong size.
 */
export const FUNCTION_MEMORY_MB = { Deliver: 256, Fanout: 256 } as const;
