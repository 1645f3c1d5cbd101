/**
 * The I/O half of check templates: the reconcile of an App whose checks name templates reads each template once
 * (a GET, only when some check names one), and the planner gets the checks made concrete (`templates.ts`). A
 * CheckTemplate is read only in the App's own namespace, whatever the App says: a tenant's App never reaches
 * another namespace's template. A template that is missing, or that the worker may not read, makes its checks
 * unresolved (each measurement an error that says why); any other failed read fails the reconcile, which is
 * retried.
 */
import { CheckTemplateKind, type AnalysisCheck } from '../../../../api/analysis.ts';
import type { CheckTemplateStore } from '../../model/analysis-io.ts';
import type { App } from '../../../../api/app.ts';
import { isKubeError } from '../../../../kube/errors.ts';
import type { Stored } from '../../../../kube/types.ts';
import { rolloutSettings } from '../../model/rollout-settings.ts';
import { referencedTemplates, resolveChecks, templateKey, templateName, type TemplateLookup } from './templates.ts';
import type { ResolvedCheck } from '../../model/analysis-io.ts';

/** The checks an App defines. */
export const appChecks = (app: App): readonly AnalysisCheck[] => rolloutSettings(app).analysis?.checks ?? [];

/** The App's checks made concrete, or undefined when none names a template (nothing is read). */
export async function readResolvedChecks(store: CheckTemplateStore | undefined, app: Stored<App>): Promise<ResolvedCheck[] | undefined> {
  const checks = appChecks(app);
  const refs = referencedTemplates(checks);
  if (refs.length === 0 || !store) return undefined;
  const ns = app.metadata.namespace;
  const found = await Promise.all(
    refs.map(async (ref): Promise<[string, TemplateLookup]> => {
      const cluster = ref.kind === CheckTemplateKind.cluster;
      const where = cluster ? '' : ` in namespace ${ns}`;
      try {
        const template = await store.get(cluster ? undefined : ns, ref.name);
        return [templateKey(ref), template ? { spec: template.spec } : { missing: `${templateName(ref)} not found${where}` }];
      } catch (err) {
        if (!isKubeError(err, 'Forbidden')) throw err;
        return [templateKey(ref), { missing: `${templateName(ref)}${where} may not be read by the ebb worker` }];
      }
    }),
  );
  return resolveChecks(checks, new Map(found));
}
