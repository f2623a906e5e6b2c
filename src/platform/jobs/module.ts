// What a context's module.ts returns to the composition root: the objects it built (services), what runs from
// them (jobs to start and list, close hooks) and the route tables it serves. The root starts a module's parts in the order listed, where its place in
// src/app/compose.ts says: a part registered later closes earlier (Lifecycle runs the hooks in reverse).
import type { RouteGroups } from '../http/route.ts';
import type { Job, JobRegistry } from './jobs.ts';
import type { Lifecycle } from './lifecycle.ts';

/**
 * One thing that runs or must be closed. With `start`, it is started; its `jobs` are listed in the JobRegistry under
 * the module's context; `stop` becomes the close hook `name`. An entry with only `name`/`stop` is a plain close hook
 * (a connection, a pool); one with only `jobs` is listed, its owner having started it.
 */
export type Running = {
  name?: string;
  start?: () => void;
  jobs?: Job[];
  stop?: () => void | Promise<void>;
};

export type Module<S> = {
  /** The owner name the JobRegistry lists its jobs under (/metrics: ems_job_*{owner}). */
  context: string;
  services: S;
  running?: Running[];
  /** Its route tables, built from its services and declared needs, by published key (the root orders them). */
  routes?: RouteGroups;
};

/** Starts a built module's parts in order and registers their jobs and close hooks; returns its services. */
export function startModule<S>(module: Module<S>, lifecycle: Pick<Lifecycle, 'onClose'>, registry: JobRegistry): S {
  for (const part of module.running ?? []) {
    part.start?.();
    for (const job of part.jobs ?? []) registry.add(module.context, job);
    if (part.stop) lifecycle.onClose(part.name ?? `${module.context} job`, part.stop);
  }
  return module.services;
}
