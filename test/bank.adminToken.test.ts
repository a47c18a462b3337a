// The admin token guards the bank's admin routes, the clock's among them
// (bank/auth.ts, bank/run.ts). The default one is known to everybody: a bank
// that listens on anything but this machine's own interface refuses to start
// with it, and says why.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_ADMIN_TOKEN } from '#bank/auth.ts'
import { ServerProcess, ServerStartError } from '#harness/spawnServer.ts'
import { STAGE0_SOLUTION } from './helpers/bank.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('admin-token')
afterAll(() => scratch.dispose())

describe('the default admin token', () => {
  it('is refused on an address other than loopback: the bank exits before it listens, naming the variable', async () => {
    const server = new ServerProcess({
      stageDir: STAGE0_SOLUTION,
      dbPath: join(scratch.path, 'any-address.sqlite'),
      adminToken: DEFAULT_ADMIN_TOKEN,
      // Never bound: the bank refuses before it listens.
      env: { LAB_HOST: '0.0.0.0' },
    })
    const started = server.start()
    await expect(started).rejects.toBeInstanceOf(ServerStartError)
    await expect(started).rejects.toThrow(/exited with code 1 before it listened[\s\S]*LAB_ADMIN_TOKEN is the default one/)
  })
})
