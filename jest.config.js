// Two projects: "unit" needs no cluster (Node, and local tools: promtool, kubectl kustomize);
// "integration" starts the real multi-cluster test environment once (globalSetup) and shares it.
const tsJest = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: tsJest,
  // Sources import siblings as "./x.js" (NodeNext); map them back to .ts.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{api,runtime,operator,dns-server,scripts}/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // Loaded by Node itself, outside jest's module system: the compiled file.
      globalSetup: '<rootDir>/dist/test/support/global-setup.js',
      globalTeardown: '<rootDir>/dist/test/support/global-teardown.js',
    },
  ],
  testTimeout: 120000,
};
