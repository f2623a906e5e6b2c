// The links between the admin screens (each its own chunk): users, backups and health; meters and areas; tariffs; notification rules; load shedding; the history import.
import { t, type Key } from '../i18n';

export function AdminLinks({ here }: { here: string }) {
  const pages: { href: string; label: Key }[] = [
    { href: '/admin', label: 'admin.tab.general' },
    { href: '/admin/meters', label: 'admin.tab.meters' },
    { href: '/admin/tariffs', label: 'admin.tab.tariffs' },
    { href: '/admin/notifications', label: 'admin.tab.notifications' },
    { href: '/admin/load-shedding', label: 'admin.tab.shedding' },
    { href: '/admin/import', label: 'admin.tab.import' },
    { href: '/admin/fdd-mapping', label: 'fddMapping.tab' },
  ];
  return (
    <nav class="tabs" aria-label={t('admin.tabs')}>
      {pages.map((page) => (
        <a key={page.href} class="tab" href={page.href} aria-current={page.href === here ? 'page' : undefined}>
          {t(page.label)}
        </a>
      ))}
    </nav>
  );
}
