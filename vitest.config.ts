import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start real server processes: give them time, and keep to the
    // machine's two cores so timing-sensitive checks are not starved.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    setupFiles: ['test/helpers/stopOnSignal.ts'],
  },
})
