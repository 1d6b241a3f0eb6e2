import type { Command } from 'commander'
import { withStore } from '../../admin/with-store.js'
import { parseInteger } from '../../core/validate.js'
import { DEFAULT_DASHBOARD_HOST, DEFAULT_DASHBOARD_PORT, serveDashboard } from '../../dashboard/serve.js'
import { ferryStderr } from '../fd-writer.js'
import { existingStore } from '../open.js'

interface DashboardFlags {
  port?: string
  host?: string
  token?: string
  readOnly?: boolean
}

export function registerDashboard(program: Command): void {
  program
    .command('dashboard')
    .description('serve the web dashboard until Ctrl-C (docs/dashboard.md)')
    .option('--port <n>', `port to listen on (default ${DEFAULT_DASHBOARD_PORT})`)
    .option(
      '--host <addr>',
      `address to listen on (default ${DEFAULT_DASHBOARD_HOST}); any other needs a token`,
    )
    .option('--token <secret>', 'required to sign in and for the API (default: FERRY_DASHBOARD_TOKEN)')
    .option('--read-only', 'show everything, change nothing')
    .action(async (flags: DashboardFlags) => {
      const port = parseInteger(flags.port ?? String(DEFAULT_DASHBOARD_PORT), '--port', {
        min: 0,
        max: 65_535,
      })
      const token = flags.token ?? nonEmpty(process.env.FERRY_DASHBOARD_TOKEN)
      await withStore(existingStore(program), async (store) => {
        const served = await serveDashboard({
          store,
          port,
          host: flags.host ?? DEFAULT_DASHBOARD_HOST,
          token,
          readOnly: flags.readOnly === true,
        })
        process.stdout.write(`${served.url}\n`)
        ferryStderr.line(
          `ferry: dashboard on ${served.url}${token === null ? '' : ' (sign in with the token)'}${flags.readOnly === true ? ', read-only' : ''}; Ctrl-C to stop`,
        )
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve)
          process.once('SIGTERM', resolve)
        })
        await served.close()
      })
    })
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value
}
