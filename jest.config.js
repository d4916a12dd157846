/**
 * One jest run covers every tier. DynamoDB Local is started once for the whole run
 * (test/global-setup.ts) and stopped in test/global-teardown.ts.
 * middy 7 ships ESM only, so @swc/jest also transforms node_modules/@middy.
 * An ES module, as package.json's "type": "module" makes every .js file; jest 30 loads it
 * with import() and still runs the tests as CommonJS (the swc transform below).
 */
import { availableParallelism } from 'node:os';

const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];
const common = {
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  // @middy/core and @middy/util export only an `import` condition, which jest's CommonJS resolver skips.
  // client/src is an ES module package for Node as well as bundlers: its imports name the .js they compile to.
  moduleNameMapper: {
    '^@middy/(core|util)$': '<rootDir>/node_modules/@middy/$1/index.js',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
};
/**
 * Delivery-focused e2e files run again with the local stack in chaos mode (LOCAL_CHAOS, lib/local/chaos.ts): the
 * engine's promises under duplicated, reordered and late messages, stream batches run twice and wake-ups late or
 * twice. About three minutes' worth; docs/development.md says why these files and not the others.
 */
const CHAOS_E2E = [
  'delivery',
  'ordered-delivery',
  'redeliver-recover-races',
  'endpoint-lifecycle',
  'webhook-filters',
  'webhook-rate-limit',
  'event-feed',
];
export default {
  // The root transform also compiles globalSetup/globalTeardown.
  ...common,
  // jest's default (one worker less than the cores) is one worker on two cores; the e2e and sim
  // files spend most of their time waiting on timers and the network, so two run side by side.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    {
      ...common,
      displayName: 'e2e-chaos',
      testMatch: CHAOS_E2E.map((name) => `<rootDir>/test/e2e/${name}.test.ts`),
      // Only when a file of this project runs: one seed for the run, printed at its start and end.
      globalSetup: '<rootDir>/test/chaos/global-setup.ts',
      globalTeardown: '<rootDir>/test/chaos/global-teardown.ts',
      // After the framework: a file's seed mixes in its path (expect.getState().testPath).
      setupFilesAfterEnv: ['<rootDir>/test/chaos/env.ts'],
    },
    { ...common, displayName: 'cdk', testMatch: ['<rootDir>/test/cdk/**/*.test.ts'] },
    { ...common, displayName: 'sim', testMatch: ['<rootDir>/test/sim/**/*.test.ts'] },
    { ...common, displayName: 'client', testMatch: ['<rootDir>/client/test/**/*.test.ts'] },
  ],
};
