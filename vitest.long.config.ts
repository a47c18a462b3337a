// The long tier (npm run test:long): the tests that prove what takes minutes
// to prove: a roster graded end to end, every interrupt, the sandbox's
// probes, a closed-book copy of the whole course. CI runs it after npm test,
// then the repetitions (scripts/repeat.ts).
import { defineConfig } from 'vitest/config'
import base from './vitest.config.ts'

export default defineConfig({ ...base, test: { ...base.test, include: ['test/long/**/*.test.ts'], exclude: ['**/node_modules/**'] } })
