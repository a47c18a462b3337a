// npm run serve -- <stage> [--solution]: run a stage's server on port 3000 to try it by hand.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { findStage } from './course.ts'
import { repoRoot } from './paths.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { solution: { type: 'boolean', default: false }, port: { type: 'string', default: '3000' } },
})
const stage = findStage(positionals[0] ?? '0')
const dir = resolve(repoRoot, values.solution ? 'solutions' : 'stages', stage.folder)
console.log(`stage ${stage.number} · ${stage.title} — admin token: admin-secret-change-me, database: bank.sqlite`)
const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, 'bank/main.ts')], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { ...process.env, LAB_STAGE_DIR: dir, LAB_PORT: values.port },
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'))
child.on('exit', (code) => process.exit(code ?? 0))
