/** Jest with @swc/jest: fast TypeScript transform with legacy decorators and decorator metadata. */
const esmOnly = ['@whiskeysockets/baileys', 'whatsapp-rust-bridge', 'p-queue', 'p-timeout'];
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  testTimeout: 30000,
  // Test files run in worker processes that are replaced once they grow past this, so a long run never
  // exhausts one process's heap (with a single worker jest would otherwise run everything in band).
  workerIdleMemoryLimit: '1GB',
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', require('./swc.options.js')],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleNameMapper: {
    '^whatsapp-rust-bridge$': '<rootDir>/node_modules/whatsapp-rust-bridge/dist/index.js',
  },
};
