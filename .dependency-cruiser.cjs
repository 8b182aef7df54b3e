// The layering of issue #12, checked by `npm run check` (dependency-cruiser).
//
//   config → errors              errors → nothing            model → model, errors
//   store → model, errors, config                 (never domain, formats, http, cli)
//   formats → model, errors                       (never domain, store, http)
//   domain → model, errors, config, store/types.ts only   (never formats, http, a dialect)
//   render-cache → model, errors, config          http → never store/* (go through the domain)
//   no route imports another route; nothing under src/ imports test/;
//   only the composition modules pick SQLite or PostgreSQL (the store factory).
//
// Each rule names the layer it protects, so a failure reads as "which rule, which file pair".

/** The modules that wire store factory + formats + http: the entry points and the server's wiring. */
const COMPOSITION = '^src/(main|composition|cli/index|cli/serve|cli/doctor)\\.ts$';

/** The storage seam every layer above the store may name (types only, no driver). */
const STORE_SEAM = '^src/store/types\\.ts$';

/**
 * Wrong-way imports that other helpers of #12 are removing right now. Each is one file pair,
 * ignored by name so that any NEW wrong-way import still fails. Delete an entry (or all) once
 * its fix is merged; `npm run check` then proves the tree is clean.
 */
const TEMPORARY_EXCEPTIONS = [
  // None left: the redesign (#12) removed every wrong-way import. Add a pair here only with a
  // comment naming the issue that takes it away.
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'errors-not-to-anything',
      comment: 'src/errors/ is the bottom layer: the code → status table and AppError import nothing of ours.',
      severity: 'error',
      from: { path: '^src/errors/' },
      to: { path: '^src/', pathNot: '^src/errors/' },
    },
    {
      name: 'config-only-to-errors',
      comment: 'src/config/ parses the environment; it may raise errors, nothing else.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|errors)/' },
    },
    {
      name: 'model-only-to-model-errors',
      comment: 'src/model/ is the shared vocabulary (plain types, pure helpers); it knows no layer above.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/(model|errors)/' },
    },
    {
      name: 'store-not-to-domain',
      comment: 'The store is below the domain: storage facts live in store/, use cases in domain/.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/domain/' },
    },
    {
      name: 'store-only-to-model-errors-config',
      comment: 'The store knows the vocabulary, the errors and the config; never formats, http, cli or the caches.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: '^src/(store|model|errors|config|domain)/' },
    },
    {
      name: 'formats-not-to-domain',
      comment: 'A writer turns model values into bytes; domain logic stays out (move shared vocabulary to src/model/).',
      severity: 'error',
      from: { path: '^src/formats/' },
      to: { path: '^src/domain/' },
    },
    {
      name: 'formats-only-to-model-errors',
      comment: 'A writer knows the vocabulary and the errors; never the store, http or the caches.',
      severity: 'error',
      from: { path: '^src/formats/' },
      to: { path: '^src/', pathNot: '^src/(formats|model|errors|domain)/' },
    },
    {
      name: 'domain-not-to-formats',
      comment: 'The domain does not pick writers; the composition module hands it the registry.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/formats/' },
    },
    {
      name: 'domain-only-to-store-seam',
      comment: 'The domain reaches storage through store/types.ts only, never a dialect or the factory.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/store/', pathNot: STORE_SEAM },
    },
    {
      name: 'domain-not-to-outer-layers',
      comment: 'Use cases know nothing of HTTP, the CLI, the caches or the rate limits.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|cli|render-cache|rate-limit)/|^src/main\\.ts$' },
    },
    {
      name: 'render-cache-only-to-model-errors-config',
      comment: 'The render cache stores bytes by key; it knows the vocabulary, errors and config only.',
      severity: 'error',
      from: { path: '^src/render-cache/' },
      to: { path: '^src/', pathNot: '^src/(render-cache|model|errors|config)/' },
    },
    {
      name: 'rate-limit-only-to-model-errors-config',
      comment: 'The rate-limit counters count; they know the vocabulary, errors and config only.',
      severity: 'error',
      from: { path: '^src/rate-limit/' },
      to: { path: '^src/', pathNot: '^src/(rate-limit|model|errors|config)/' },
    },
    {
      name: 'http-not-to-store',
      comment: 'HTTP reaches storage through the domain only (not even the seam types): no SQLite or PostgreSQL knowledge in http/.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'http-not-to-formats-cli',
      comment: 'HTTP does not pick writers (the domain opens the byte stream) and never calls the CLI.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(formats|cli)/|^src/main\\.ts$' },
    },
    {
      name: 'route-not-to-route',
      comment: 'A route never imports another route; share through a schema, a plugin or the domain.',
      severity: 'error',
      from: { path: '^src/http/(admin/)?routes/' },
      to: { path: '^src/http/(admin/)?routes/' },
    },
    {
      name: 'cli-only-to-domain-model-errors-config',
      comment: 'CLI commands call use cases; they may name the storage seam (types only), not a dialect or the factory.',
      severity: 'error',
      from: { path: '^src/cli/', pathNot: COMPOSITION },
      to: { path: '^src/', pathNot: `^src/(cli|domain|model|errors|config)/|${STORE_SEAM}` },
    },
    {
      name: 'only-composition-picks-dialect',
      comment: 'Only the composition modules (main.ts, cli/index.ts, cli/serve.ts) open the store factory or a dialect.',
      severity: 'error',
      from: { pathNot: `^src/store/|${COMPOSITION}|^test/|^bench/|^scripts/` },
      to: { path: '^src/store/(factory\\.ts|sqlite/|postgres/)' },
    },
    {
      name: 'src-not-to-test',
      comment: 'Nothing under src/ imports test/ (test support lives in test/support/ and is not built).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Tests (*.test.ts, also those beside their module) cross layers on purpose: a store contract
    // test publishes through the domain. The rules guard the product, which is what dist/ holds.
    exclude: { path: '\\.test\\.ts$' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    knownViolations: TEMPORARY_EXCEPTIONS.map(([rule, from, to]) => ({
      type: 'dependency',
      from,
      to,
      rule: { severity: 'error', name: rule },
    })),
  },
};
