// Three projects so a developer can run the fast tier alone; `npm test` runs all of them.
const esmOnly = ['@toon-format'].join('|');
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper: {
    '^@context-guru/(components|dsl|storage|engine)$': '<rootDir>/libs/$1/src/index.ts',
    '^@context-guru/(admin|gateway|embedded)$': '<rootDir>/apps/$1/src/index.ts',
  },
};
module.exports = {
  // Per-project testTimeout is not applied by jest 30 (tests got 5 s): the generous bound lives here.
  testTimeout: 60_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // Real services and real servers: generous per-test time, since CI runs suites in parallel on 2 cores.
    { ...shared, displayName: 'int', testMatch: ['<rootDir>/test/int/**/*.test.ts'], testTimeout: 60_000 },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], testTimeout: 60_000 },
  ],
};
