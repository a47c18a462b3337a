import { rmSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  plugins: [
    {
      // Vitest removes its temp folder asynchronously on close, which Ctrl-C
      // skips (it exits at once); remove it on exit too.
      name: 'remove-vitest-tmp-on-exit',
      configureVitest({ vitest }) {
        const dir = (vitest as unknown as { _tmpDir?: string })._tmpDir
        if (dir) process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
      },
    },
  ],
  test: {
    // npm test: the fast tier, what a contributor runs after every change.
    // test/long/ is the long tier (vitest.long.config.ts), which CI runs after it.
    include: ['test/**/*.test.ts'],
    exclude: ['test/long/**', '**/node_modules/**'],
    // Tests start real server processes: give them time, and keep to the
    // machine's two cores so timing-sensitive checks are not starved.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    setupFiles: ['test/helpers/stopOnSignal.ts'],
    globalSetup: ['test/setup/postgres.ts'],
  },
})
