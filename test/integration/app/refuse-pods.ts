/** A cluster admission rule that refuses some pods: what holds a rollout (the dry run before a delete is refused). */
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { sandbox } from '../support.ts';
import { image, uniqueName } from './harness.ts';

const admission = (resource: string, name?: string) => ({ group: 'admissionregistration.k8s.io', version: 'v1', resource, name });

/**
 * A ValidatingAdmissionPolicy, bound to namespace `ns` only, that refuses pods labelled `<label>=yes`; resolves
 * with its name once the apiserver enforces it. Its removal is pushed onto `cleanups`.
 */
export async function refusePodsLabelled(ns: string, label: string, cleanups: (() => Promise<unknown>)[]): Promise<string> {
  const { rest } = sandbox();
  const name = uniqueName('ebb-test-deny');
  await rest.create(admission('validatingadmissionpolicies'), {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
      validations: [
        {
          expression: `!has(object.metadata.labels) || !('${label}' in object.metadata.labels) || object.metadata.labels['${label}'] != 'yes'`,
          message: `pods labelled ${label}=yes are not allowed here`,
        },
      ],
    },
  });
  cleanups.push(() => rest.delete(admission('validatingadmissionpolicies', name)));
  await rest.create(admission('validatingadmissionpolicybindings'), {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } } },
  });
  cleanups.push(() => rest.delete(admission('validatingadmissionpolicybindings', name)));
  // Policies take effect once the apiserver has loaded them: a probe pod is refused by then.
  const probe = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'probe-', labels: { [label]: 'yes' } },
    spec: { containers: [{ name: 'c', image: image('probe') }] },
  };
  await waitFor(
    async () => {
      try {
        await rest.create(core('pods', ns), probe, { dryRun: 'All' });
        return undefined;
      } catch {
        return true;
      }
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `policy ${name} in force` },
  );
  return name;
}
