// Scenario: a server that says it listens, accepts connections, and never
// answers anything, not even GET /health. It also ignores SIGTERM and has a
// child of its own that ignores SIGTERM too, so only a SIGKILL of the whole
// process group cleans it up.
import { spawn } from 'node:child_process'
import { listen } from './lib/listen.ts'

const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 60_000)"], {
  stdio: 'ignore',
})
process.on('SIGTERM', () => console.log('scenario hangs-on-health: ignoring SIGTERM'))
listen(() => {
  // Never answer.
})
console.log(`scenario hangs-on-health: pid ${process.pid}, grandchild pid ${child.pid}`)
