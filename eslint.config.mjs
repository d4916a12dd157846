import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import a folder must not make: `regex` over the import path, and why (docs/architecture.md, Where things live). */
const forbid = (regex, message) => ({ regex, message });
const BUILD_TIME = [
  forbid('(^|/)(lib|bench)/', 'Build-time and local code (lib/, bench/) never ships in a Lambda bundle.'),
  forbid('^(aws-cdk-lib|constructs|esbuild)($|/)', 'CDK and esbuild are build-time only.'),
];

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'coverage/', '.local/', 'client/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // What must hold is an error: `npm run lint` runs with --quiet, which shows errors only.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  // Shape of the code that runs or ships (tests may take one argument per table column, and a
  // describe block is as long as its cases). More than five parameters is an error: name them in
  // an options object with a type. Long or branchy functions are warnings: `npm run lint` shows
  // errors only, `npm run lint:report` lists these too, the next candidates for a split.
  {
    files: [
      'shared/**/*.ts',
      'functions/**/*.ts',
      'lib/**/*.ts',
      'bin/**/*.ts',
      'sim/**/*.ts',
      'bench/**/*.ts',
      'client/src/**/*.ts',
    ],
    rules: {
      'max-params': ['error', 5],
      complexity: ['warn', 15],
      'max-lines-per-function': ['warn', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  // Prettier wraps code at 120; comments and strings are held to it here.
  {
    files: ['shared/**/*.ts', 'functions/**/*.ts', 'lib/**/*.ts', 'bin/**/*.ts'],
    rules: { 'max-len': ['error', { code: 120, ignoreUrls: true }] },
  },
  // The dependency rule. Later blocks replace earlier ones for the same files, so the domain's repeats the others.
  {
    files: ['functions/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: BUILD_TIME }] },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...BUILD_TIME, forbid('(^|/)functions/', 'shared/ serves the handlers; it never imports them.')] },
      ],
    },
  },
  // The delivery engine's decisions, stages and ports (shared/delivery/*.ts) keep the domain's rule;
  // its adapters (shared/delivery/dynamo/, shared/delivery/aws/) are the layer allowed the SDK.
  {
    files: ['shared/domain/**/*.ts', 'shared/delivery/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...BUILD_TIME,
            forbid('(^|/)functions/', 'shared/ serves the handlers; it never imports them.'),
            forbid(
              '^@aws-sdk/',
              'The domain is plain TypeScript: AWS adapters live in shared/store, shared/aws and shared/delivery/{dynamo,aws}, behind ports.',
            ),
            forbid(
              '(^|/)(http|store|dynamo|aws|wiring)/',
              'The domain knows ports, not HTTP, the table, AWS or the wiring.',
            ),
            forbid(
              '(^|/)(routes|config)$',
              'The route table and the configuration depend on the domain, not the reverse.',
            ),
          ],
        },
      ],
    },
  },
  // The client library for apps runs in browsers as well as Node 20+: Web APIs only (fetch, Web Crypto,
  // TextEncoder), and openapi-fetch its one runtime dependency (client/package.json).
  {
    files: ['client/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            forbid('^(?!\\.{1,2}/|openapi-fetch$)', 'client/src imports only its own modules and openapi-fetch.'),
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['Buffer', 'process', 'require', '__dirname', 'setImmediate'].map((name) => ({
          name,
          message: 'Not in browsers: the client uses Web APIs only.',
        })),
      ],
    },
  },
  // The portal's browser modules: plain JavaScript, and no API that parses a string as markup
  // or code (receiver answers are shown in it: see portal/dom.js).
  {
    files: ['portal/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        navigator: 'readonly',
        crypto: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
    rules: {
      'no-restricted-properties': [
        'error',
        ...[
          'innerHTML',
          'outerHTML',
          'insertAdjacentHTML',
          'write',
          'writeln',
          'createContextualFragment',
          'setHTMLUnsafe',
        ].map((property) => ({ property, message: 'Build DOM with portal/dom.js: text stays text.' })),
      ],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
    },
  },
);
