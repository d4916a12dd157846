/**
 * Chaos mode for every local stack an e2e-chaos file starts, in this process (test/helpers/stack.ts)
 * or as `npm start` (test/helpers/child-stack.ts passes the environment on). Jest gives each test
 * file its own copy of process.env, so the e2e project's files, run by the same workers, stay calm.
 */
process.env.LOCAL_CHAOS = process.env.E2E_LOCAL_CHAOS || 'on';
