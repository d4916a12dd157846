/**
 * Imported first by every benchmark, before any module creates its logger or SDK client:
 * logs at ERROR (logging is not what is measured), no SDK notice about this Node version,
 * and a warning on stderr when the Node running it is not the one Lambda runs.
 */
import '../../lib/local/lambda-runtime';

process.env.POWERTOOLS_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'ERROR';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// The figures in docs/performance.md are Node 24's, as Lambda runs it; an older Node on PATH measures something else.
if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(
    `Node ${process.versions.node}: Lambda runs Node 24 and docs/performance.md's figures are Node 24's; put Node 24 first on PATH (.ci/run keeps one under ~/.cache/shop-calls-api).`,
  );
}
