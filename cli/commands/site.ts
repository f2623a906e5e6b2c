// emsctl site show | set: the site's name, time zone and currency (what PUT /api/configs sets), from the box's shell.
import type { Command } from 'commander';
import type { Db } from '../../src/platform/db/client.ts';
import { CliError, UsageError, printResult, withDb } from '../context.ts';

/** emsctl acts without an account; the audit trail names it. */
const EMSCTL = { id: null, username: 'emsctl' };

type SiteView = { siteName: string; timezone: string; currency: string; locale: string; electricityPrice: number; defaults: string[] };

async function siteView(db: Db): Promise<SiteView> {
  const [{ ConfigStore }, { AuditLog }, { sceneModels }] = await Promise.all([
    import('../../src/site/cli.ts'),
    import('../../src/platform/db/auditTrail.ts'),
    import('../../src/files/cli.ts'),
  ]);
  const store = new ConfigStore(db, new AuditLog(db), sceneModels(db));
  const { siteName, timezone, currency, locale, electricityPrice } = store.platform();
  return { siteName, timezone, currency, locale, electricityPrice, defaults: store.unconfirmed() };
}

function siteText(view: SiteView, heading?: string): string {
  const still = view.defaults.length ? `\nstill the defaults: ${view.defaults.join(', ')} (emsctl site set --name … --timezone … --currency …)` : '';
  return `${heading ? `${heading}\n` : ''}name      ${view.siteName}\ntime zone ${view.timezone}\ncurrency  ${view.currency}${still}`;
}

export function registerSiteCommands(program: Command): void {
  const site = program.command('site').description("the site's name, time zone and currency (as PUT /api/configs)");

  site
    .command('show')
    .description("show the site's name, time zone and currency, and which are still the defaults")
    .action(async (_options, command: Command) => {
      await withDb(command, async (db) => {
        const view = await siteView(db);
        printResult(command, view, siteText(view));
      });
    });

  site
    .command('set')
    .description("set the site's name, time zone (IANA, e.g. Europe/Berlin) and currency (ISO 4217, e.g. EUR)")
    .option('--name <name>', 'site name shown on the wallboard and in reports')
    .option('--timezone <zone>', 'IANA time zone: where a site day starts for every figure, tariff band and report')
    .option('--currency <code>', 'ISO 4217 currency code')
    .action(async (options: { name?: string; timezone?: string; currency?: string }, command: Command) => {
      const patch = {
        ...(options.name !== undefined ? { siteName: options.name } : {}),
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
        ...(options.currency !== undefined ? { currency: options.currency } : {}),
      };
      if (!Object.keys(patch).length) throw new UsageError('nothing to change: give --name, --timezone and/or --currency');
      const [{ ConfigStore }, { AuditLog }, { runningService }, { AppError }, { Value }, { PlatformConfigUpdate }, { sceneModels }] = await Promise.all([
        import('../../src/site/cli.ts'),
        import('../../src/platform/db/auditTrail.ts'),
        import('../../src/operations/cli.ts'),
        import('../../src/platform/errors.ts'),
        import('@sinclair/typebox/value'),
        import('../../src/site/index.ts'),
        import('../../src/files/cli.ts'),
      ]);
      // The API's own schema first (length, characters, the currency's form), so emsctl and the API cannot drift apart.
      const error = Value.Errors(PlatformConfigUpdate, patch).First();
      if (error) throw new UsageError(`${error.path.replace(/^\/siteName/, '--name').replace(/^\//, '--')}: ${error.message}`);
      await withDb(command, async (db, config) => {
        const { scheduleZoneMove } = await import('../../src/metering/cli.ts');
        // A new zone re-keys the stored energy while collection waits: the running service does that, not a second
        // process. With the service stopped, the move is recorded with the change and carried out at its next start.
        const zoneMove = {
          change: async <T>(apply: () => T): Promise<T> => {
            const holder = runningService(config.dataDir);
            if (holder) throw new CliError(`the service is running (pid ${holder.pid}): change the time zone with PUT /api/configs, or stop it first`);
            return db.sqlite.transaction(() => {
              const from = store.platform().timezone;
              const value = apply();
              scheduleZoneMove(db, from, store.platform().timezone);
              return value;
            })();
          },
        };
        const store = new ConfigStore(db, new AuditLog(db), sceneModels(db), zoneMove);
        try {
          await store.updatePlatform(EMSCTL, patch);
        } catch (failure) {
          if (failure instanceof AppError) {
            const detail = failure.details?.[0];
            throw new UsageError(detail ? `--${detail.path.replace(/^body\./, '').replace('siteName', 'name')} ${detail.message}` : failure.message);
          }
          throw failure;
        }
        const view = await siteView(db);
        printResult(command, view, siteText(view, 'site settings changed:'));
      });
    });
}
