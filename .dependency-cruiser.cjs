// The layer rules of CONTRIBUTING.md's layout table, checked by `npm test` (npm run lint:deps).
// Dependencies point down only: shared ← core ← host/cli ← main; renderer and preload know only
// shared (and window.api); nothing but main and preload imports electron; no cycles.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'A cycle ties layers together; move the shared types to a neutral file.', from: {}, to: { circular: true } },
    {
      name: 'shared-imports-only-zod',
      severity: 'error',
      comment: 'src/shared is the contract: it imports nothing of ours but shared, and no package but zod.',
      from: { path: '^src/shared/' },
      to: { pathNot: ['^src/shared/', '^node_modules/zod/', '^node_modules/@types/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'core-is-not-electron',
      severity: 'error',
      comment: 'src/core is used by the CLI, the model host, tests and benchmarks: no Electron, no app layers above it.',
      from: { path: '^src/core/' },
      to: { path: ['^src/(main|renderer|preload|host|cli)/', '^node_modules/electron/'] },
    },
    {
      name: 'host-is-not-electron',
      severity: 'error',
      comment: 'The model host is a plain Node process: core and shared only.',
      from: { path: '^src/host/' },
      to: { path: ['^src/(main|renderer|preload|cli)/', '^node_modules/electron/'] },
    },
    {
      name: 'cli-is-not-electron',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: ['^src/(main|renderer|preload)/', '^node_modules/electron/'] },
    },
    {
      name: 'renderer-knows-only-shared',
      severity: 'error',
      comment: 'The renderer talks to the app through window.api; it imports shared types, never core, host or main.',
      from: { path: '^src/renderer/' },
      to: { path: ['^src/(main|core|host|cli|preload)/', '^node_modules/electron/'] },
    },
    {
      name: 'preload-has-no-logic',
      severity: 'error',
      from: { path: '^src/preload/' },
      to: { path: ['^src/(main|core|host|cli|renderer)/'] },
    },
    {
      name: 'main-does-not-reach-up',
      severity: 'error',
      from: { path: '^src/main/' },
      to: { path: ['^src/(renderer|cli|preload)/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
