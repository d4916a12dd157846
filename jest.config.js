/**
 * One jest run covers every tier. DynamoDB Local is started once for the whole run
 * (test/global-setup.ts) and stopped in test/global-teardown.ts.
 * middy 7 ships ESM only, so @swc/jest also transforms node_modules/@middy.
 * An ES module, as package.json's "type": "module" makes every .js file; jest 30 loads it
 * with import() and still runs the tests as CommonJS (the swc transform below).
 */
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
export default {
  // The root transform also compiles globalSetup/globalTeardown.
  ...common,
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    { ...common, displayName: 'cdk', testMatch: ['<rootDir>/test/cdk/**/*.test.ts'] },
    { ...common, displayName: 'sim', testMatch: ['<rootDir>/test/sim/**/*.test.ts'] },
    { ...common, displayName: 'client', testMatch: ['<rootDir>/client/test/**/*.test.ts'] },
  ],
};
