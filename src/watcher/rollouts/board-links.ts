/**
 * Links between Bull Board and the rollouts page: each reconcile job ebb made for an App links to that App's
 * page (Bull Board's `externalJobUrl`, shown on the job), and the board's header links to the list. The page
 * links back to the board from its own header.
 */
import { ownJobKey } from '../../queue/job-id.ts';
import { appHref } from './list-page.ts';

/** A job as Bull Board hands it to `externalJobUrl`. */
interface JobLike {
  id?: unknown;
  data?: unknown;
}

/** The link from a job to its App's page below `base`; undefined for a job of anything but an App. */
export function appPageLink(base: string): (job: JobLike) => { href: string; displayText: string } | undefined {
  return (job) => {
    const key = ownJobKey(typeof job.id === 'string' ? job.id : undefined, job.data);
    if (key?.kind !== 'App') return undefined;
    return { href: appHref(base, key), displayText: `Rollout of ${key.namespace}/${key.name}` };
  };
}
