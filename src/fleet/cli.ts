// `ems-fleetctl`: the fleet admin's commands, run beside the fleet service with the same EMS_FLEET_DATABASE_URL.
// `user add` prints a user's token once; `code` prints a one-time enrolment code for `emsctl fleet join`; `drop-raw`
// drops old months of raw intervals (retention.ts).
import { Command } from 'commander';
import { FleetConfigError, loadFleetConfig } from './config.ts';
import { migrateFleetDb, openFleetDb } from './db.ts';
import { addUser, chooseBox, createEnrolmentCode, revokeSite } from './enrolment.ts';
import { FleetError } from './errors.ts';
import { dropRawMonths } from './retention.ts';
import { FLEET_ROLES, type FleetRole } from './schema.ts';

async function withDb<T>(work: (db: ReturnType<typeof openFleetDb>) => Promise<T>): Promise<T> {
  const config = loadFleetConfig();
  await migrateFleetDb(config.databaseUrl);
  const db = openFleetDb(config.databaseUrl, { poolSize: 2 });
  try {
    return await work(db);
  } finally {
    await db.pool.end();
  }
}

const program = new Command('ems-fleetctl').description('EMS fleet administration').exitOverride();
program
  .command('migrate')
  .description('apply the fleet schema migrations')
  .action(async () => {
    await withDb(async () => {});
    console.log('fleet database migrated');
  });
const user = program.command('user').description('fleet users');
user
  .command('add <name>')
  .requiredOption('--role <role>', `one of ${FLEET_ROLES.join(', ')}`)
  .option('--site <id...>', 'limit the user to these sites (repeatable); default: every site')
  .action(async (name: string, opts: { role: string; site?: string[] }) => {
    if (!FLEET_ROLES.includes(opts.role as FleetRole)) throw new FleetError('invalid_request', `--role must be one of ${FLEET_ROLES.join(', ')}`);
    const { token } = await withDb((db) => addUser(db.pool, name, opts.role as FleetRole, opts.site ?? []));
    console.log(token);
  });
program
  .command('code <siteName>')
  .description('make a one-time enrolment code for a new site')
  .option('--valid-hours <n>', 'how long the code stays valid', '72')
  .action(async (siteName: string, opts: { validHours: string }) => {
    const hours = Number(opts.validHours);
    if (!Number.isInteger(hours) || hours < 1 || hours > 720) throw new FleetError('invalid_request', '--valid-hours must be 1 to 720');
    const { code, expiresAt } = await withDb((db) => createEnrolmentCode(db.pool, siteName, hours));
    console.log(`${code}\t(valid until ${expiresAt})`);
  });
program
  .command('revoke <siteId>')
  .description("revoke a site's credential: its batches are refused from now on")
  .action(async (siteId: string) => {
    await withDb((db) => revokeSite(db.pool, siteId));
    console.log(`site ${siteId} revoked`);
  });
program
  .command('box <siteId> <installId>')
  .description('say which box is the site (after a "second box" alarm): its install id, shown by emsctl fleet status on that box')
  .action(async (siteId: string, installId: string) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(installId)) throw new FleetError('invalid_request', 'the install id is a UUID');
    await withDb((db) => chooseBox(db.pool, siteId, installId));
    console.log(`site ${siteId}: the box ${installId} is the site; other boxes are refused`);
  });
program
  .command('drop-raw')
  .description(
    'drop the raw 15-minute intervals of the months before the kept ones (the day rollups stay); from then on the fleet stores no interval of those months, whatever a box sends',
  )
  .requiredOption('--keep-months <n>', 'the months kept before the current one (UTC), 1 to 1200')
  .action(async (opts: { keepMonths: string }) => {
    const { rawFrom, dropped } = await withDb((db) => dropRawMonths(db.pool, Number(opts.keepMonths)));
    console.log(`raw intervals kept from ${rawFrom}; dropped: ${dropped.length > 0 ? dropped.join(', ') : 'none'}`);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const code = (error as { code?: string }).code;
  if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exit(0);
  if (!(error instanceof FleetError || error instanceof FleetConfigError || code?.startsWith('commander.'))) {
    process.stderr.write(`ems-fleetctl: ${(error as Error).message}\n`);
    process.exit(1);
  }
  if (!code?.startsWith('commander.')) process.stderr.write(`ems-fleetctl: ${(error as Error).message}\n`);
  process.exit(1);
}
