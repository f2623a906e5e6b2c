// Administration for fleet admins (issue 55 item 5): a new site's enrolment code, the sites (rename, revoke and
// re-admit, within the admin's sites) and, for an admin of every site, the people: invitations, roles and sites.
import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, t } from '../i18n';
import { browserZone } from './parts';
import { QrCode } from './qr';
import { fleetGet, fleetSend, fleetUser } from './session';
import type { EnrolmentCode, HealthPage, Invitation, People } from './types';

type Outcome = { problem: string | null; done: string | null };

/** Runs a change; its refusal in words, or what it did. */
async function attempt<T>(send: () => ReturnType<typeof fleetSend<T>>, done: (data: T) => string): Promise<Outcome> {
  const answer = await send();
  if (!answer.response.ok) return { problem: errorText(answer.error, answer.response.status), done: null };
  return { problem: null, done: done(answer.data as T) };
}

function NewSite() {
  const [name, setName] = useState('');
  const [outcome, setOutcome] = useState<Outcome>({ problem: null, done: null });
  const [command, setCommand] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    let made: string | null = null;
    setOutcome(
      await attempt(
        () => fleetSend<EnrolmentCode>('POST', '/api/fleet/enrolment-codes', { siteName: name.trim() }),
        (code) => {
          made = `emsctl fleet join ${location.origin} ${code.code}`;
          return t('fleet.codeMade', { code: code.code, command: made, until: dateTime(code.expiresAt, browserZone) });
        },
      ),
    );
    setCommand(made);
  }
  return (
    <form class="card stack" onSubmit={submit} noValidate>
      <h2>{t('fleet.newSite')}</h2>
      <Field label={t('fleet.siteName')} hint={t('fleet.newSiteHint')}>
        {(id, describedBy) => <input id={id} name="siteName" aria-describedby={describedBy} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Problem text={outcome.problem} />
      {outcome.done && <pre class="code-out">{outcome.done}</pre>}
      {command && <QrCode text={command} label={t('fleet.qrLabel', { command })} />}
      <button type="submit" class="primary">
        {t('fleet.makeCode')}
      </button>
    </form>
  );
}

function SiteRow({ site, reload }: { site: HealthPage['items'][number]; reload: () => void }) {
  const [name, setName] = useState(site.name);
  const [outcome, setOutcome] = useState<Outcome>({ problem: null, done: null });
  const revoked = site.status === 'revoked';
  const act = async (send: () => ReturnType<typeof fleetSend<unknown>>, done: string) => {
    const result = await attempt(send, () => done);
    setOutcome(result);
    if (!result.problem) reload();
  };
  return (
    <tr>
      <th scope="row">
        <form
          class="inline"
          onSubmit={(e) => (e.preventDefault(), act(() => fleetSend('PATCH', `/api/fleet/sites/${site.id}`, { name: name.trim() }), t('fleet.renamed')))}
        >
          <input aria-label={t('fleet.renameOf', { name: site.name })} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit">{t('fleet.rename')}</button>
        </form>
      </th>
      <td>
        <a href={`/sites/${site.id}`}>{revoked ? t('fleet.reasonRevoked') : t('fleet.siteCol')}</a>
      </td>
      <td>
        {revoked ? (
          <button type="button" onClick={() => act(() => fleetSend('POST', `/api/fleet/sites/${site.id}/readmit`), t('fleet.readmitted'))}>
            {t('fleet.readmit')}
          </button>
        ) : (
          <button
            type="button"
            class="danger"
            onClick={() =>
              confirm(t('fleet.revokeConfirm', { name: site.name })) && act(() => fleetSend('POST', `/api/fleet/sites/${site.id}/revoke`), t('fleet.revoked'))
            }
          >
            {t('fleet.revoke')}
          </button>
        )}
        <Problem text={outcome.problem} />
        <Done text={outcome.done} />
      </td>
    </tr>
  );
}

function Sites() {
  const sites = useApi(() => fleetGet<HealthPage>('/api/fleet/sites?pageSize=500'), []);
  return (
    <div class="card">
      <h2>{t('fleet.sitesAdmin')}</h2>
      <Problem text={sites.problem} />
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('fleet.siteCol')}</th>
              <th scope="col">{t('fleet.details')}</th>
              <th scope="col">{t('fleet.access')}</th>
            </tr>
          </thead>
          <tbody>
            {sites.data?.items.map((site) => (
              <SiteRow key={site.id} site={site} reload={sites.reload} />
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function SitePicker({ label, sites, chosen, set }: { label: string; sites: HealthPage['items']; chosen: string[]; set: (ids: string[]) => void }) {
  return (
    <Field label={label} hint={t('fleet.sitesHint')}>
      {(id, describedBy) => (
        <select id={id} multiple aria-describedby={describedBy} onChange={(e) => set([...e.currentTarget.selectedOptions].map((o) => o.value))}>
          {sites.map((site) => (
            <option key={site.id} value={site.id} selected={chosen.includes(site.id)}>
              {site.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function Invite({ sites, reload }: { sites: HealthPage['items']; reload: () => void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'viewer' | 'admin'>('viewer');
  const [limited, setLimited] = useState<string[]>([]);
  const [outcome, setOutcome] = useState<Outcome>({ problem: null, done: null });
  async function submit(event: Event) {
    event.preventDefault();
    const body = { name: name.trim(), role, sites: limited, ...(email.trim() ? { email: email.trim() } : {}) };
    const result = await attempt(
      () => fleetSend<Invitation>('POST', '/api/fleet/users', body),
      (made) => t('fleet.invited', { invitation: made.invitation, until: dateTime(made.expiresAt, browserZone) }),
    );
    setOutcome(result);
    if (!result.problem) reload();
  }
  return (
    <form class="stack" onSubmit={submit} noValidate>
      <h3>{t('fleet.invite')}</h3>
      <Field label={t('fleet.personName')}>{(id) => <input id={id} name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
      <Field label={t('fleet.email')} hint={t('fleet.emailHint')}>
        {(id, describedBy) => (
          <input id={id} name="email" type="email" aria-describedby={describedBy} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        )}
      </Field>
      <Field label={t('fleet.role')}>
        {(id) => (
          <select id={id} name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as 'viewer' | 'admin')}>
            <option value="viewer">{t('fleet.roleViewer')}</option>
            <option value="admin">{t('fleet.roleAdmin')}</option>
          </select>
        )}
      </Field>
      <SitePicker label={t('fleet.limitedTo')} sites={sites} chosen={limited} set={setLimited} />
      <Problem text={outcome.problem} />
      {outcome.done && <pre class="code-out">{outcome.done}</pre>}
      <button type="submit" class="primary">
        {t('fleet.inviteSubmit')}
      </button>
    </form>
  );
}

function PersonRow({ person, sites, reload }: { person: People['items'][number]; sites: HealthPage['items']; reload: () => void }) {
  const [role, setRole] = useState(person.role);
  const [limited, setLimited] = useState(person.sites ?? []);
  const [outcome, setOutcome] = useState<Outcome>({ problem: null, done: null });
  async function save(event: Event) {
    event.preventDefault();
    const result = await attempt(
      () => fleetSend('PATCH', `/api/fleet/users/${person.id}`, { role, sites: limited }),
      () => t('fleet.saved'),
    );
    setOutcome(result);
    if (!result.problem) reload();
  }
  const names = new Map(sites.map((s) => [s.id, s.name]));
  return (
    <tr>
      <th scope="row">
        {person.name}
        {person.email && <div class="muted">{person.email}</div>}
      </th>
      <td>{[...person.signIn.map((way) => t(`fleet.signIn_${way}`)), ...(person.invitationOpen ? [t('fleet.invitationOpen')] : [])].join(', ') || '–'}</td>
      <td>{person.sites === null ? t('fleet.allSites') : person.sites.map((id) => names.get(id) ?? id).join(', ')}</td>
      <td>
        <form class="stack" onSubmit={save}>
          <select aria-label={t('fleet.roleOf', { name: person.name })} value={role} onChange={(e) => setRole(e.currentTarget.value as 'viewer' | 'admin')}>
            <option value="viewer">{t('fleet.roleViewer')}</option>
            <option value="admin">{t('fleet.roleAdmin')}</option>
          </select>
          <SitePicker label={t('fleet.limitedToOf', { name: person.name })} sites={sites} chosen={limited} set={setLimited} />
          <button type="submit">{t('fleet.save')}</button>
          <Problem text={outcome.problem} />
          <Done text={outcome.done} />
        </form>
      </td>
    </tr>
  );
}

function PeopleCard() {
  const people = useApi(() => fleetGet<People>('/api/fleet/users'), []);
  const sites = useApi(() => fleetGet<HealthPage>('/api/fleet/sites?pageSize=500'), []);
  const list = sites.data?.items ?? [];
  return (
    <div class="card">
      <h2>{t('fleet.people')}</h2>
      <Problem text={people.problem} />
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('fleet.personName')}</th>
              <th scope="col">{t('fleet.signInWays')}</th>
              <th scope="col">{t('fleet.limitedTo')}</th>
              <th scope="col">{t('fleet.role')}</th>
            </tr>
          </thead>
          <tbody>
            {people.data?.items.map((person) => (
              <PersonRow key={person.id} person={person} sites={list} reload={people.reload} />
            ))}
          </tbody>
        </table>
      </div>
      <Invite sites={list} reload={people.reload} />
    </div>
  );
}

export default function Admin() {
  const user = fleetUser.value;
  if (user?.role !== 'admin') return <p>{t('fleet.adminOnly')}</p>;
  const everySite = user.sites === null;
  return (
    <section>
      <h1>{t('fleet.admin')}</h1>
      {everySite && <NewSite />}
      <Sites />
      {everySite && <PeopleCard />}
    </section>
  );
}
