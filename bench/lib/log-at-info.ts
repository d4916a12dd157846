/**
 * Imported before ./quiet by the benchmarks that price a delivery: their handlers log at the
 * stack's default level (INFO), as in Lambda, so what those lines cost in CloudWatch Logs is
 * counted (./log-bytes.ts counts and swallows them; errors still reach stderr).
 */
process.env.BENCH_LOG_LEVEL ??= 'INFO';
