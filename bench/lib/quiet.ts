/**
 * Imported first by every benchmark, before any module creates its logger or SDK client:
 * logs at ERROR (logging is not what is measured) and no SDK notice about this Node version.
 */
process.env.POWERTOOLS_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'ERROR';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
