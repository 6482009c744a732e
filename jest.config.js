/** Tests mirror the source tree: test/unit/<path of the module>, test/integration (local stack over HTTP), test/cdk. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // marked, jose and the OpenAPI validator ship only ES modules; let swc turn them into CommonJS for jest's loader.
  transformIgnorePatterns: ['/node_modules/(?!(marked|jose|@seriousme/openapi-schema-validator)/)'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
