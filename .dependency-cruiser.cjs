/**
 * Import rules checked in `npm test` (`npm run lint:imports`): no import cycles in the
 * runtime code, and the domain free of the AWS SDK and the HTTP layer (ENGINEERING.md).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle makes the import order decide what is initialised first, and ties modules that should stand alone.',
      from: { path: '^(shared|functions|lib)/' },
      to: { circular: true },
    },
    {
      name: 'domain-without-aws-or-http',
      severity: 'error',
      comment: 'Domain code is pure logic and ports: the AWS SDK and the HTTP layer stay in adapters and handlers.',
      from: { path: '^shared/domain/' },
      to: { path: ['^node_modules/@aws-sdk/', '^node_modules/@middy/', '^shared/http/', '^shared/store/', '^shared/aws/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['^test/', '^bench/', '^node_modules/'] },
  },
};
