/** `ebb set image` (also `kubectl ebb set image`): change only the named containers' images of an App. */
import type { App } from '../../api/app.ts';
import { appRef, GROUP } from '../../api/group.ts';
import { isKubeError } from '../../kube/errors.ts';
import { kubeConnection } from '../../kube/client.ts';
import { PatchType, type KubeRest } from '../../kube/rest.ts';
import type { Stored } from '../../kube/types.ts';
import { printable } from '../printable.ts';
import { loadRolloutCliConfig } from '../rollout/config.ts';
import { parseSetArgs, SET_USAGE } from './args.ts';
import { planSetImage, type ImageAssignment, type ImagePlan } from './image.ts';

/** How often a patch refused because a container moved meanwhile is planned again from a fresh read. */
const ATTEMPTS = 3;

const same = (a: ImagePlan, b: ImagePlan): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Reads the App, plans, patches. A refused patch is planned again from a fresh read: when the plan changed (a
 * container moved or was renamed meanwhile, which the patch's tests caught), it is tried again; otherwise the
 * refusal is the apiserver's answer to this very change (a validation rule, RBAC) and is returned as it is.
 */
export async function setImage(
  rest: KubeRest,
  namespace: string,
  name: string,
  assignments: readonly ImageAssignment[],
): Promise<{ text: string; code: number }> {
  const ref = appRef(namespace, name);
  let plan = planSetImage(await rest.get<Stored<App>>(ref), assignments);
  for (let attempt = 1; ; attempt++) {
    if (plan.kind === 'refuse') return { text: `ebb set image: ${plan.message}\n`, code: 1 };
    if (plan.kind === 'unchanged') return { text: `app.${GROUP}/${name} image unchanged\n`, code: 0 };
    try {
      await rest.patch(ref, plan.ops, PatchType.json);
      return { text: `app.${GROUP}/${name} image updated (${plan.changed.join(', ')})\n`, code: 0 };
    } catch (err) {
      if (!isKubeError(err, 'Invalid', 'Conflict', 'BadRequest', 'ServerError') || attempt >= ATTEMPTS) throw err;
      const again = planSetImage(await rest.get<Stored<App>>(ref), assignments);
      if (same(again, plan)) throw err;
      plan = again;
    }
  }
}

export async function setCommand(argv: string[]): Promise<number> {
  const args = parseSetArgs(argv);
  if (args.op === 'help') {
    process.stdout.write(SET_USAGE);
    return 0;
  }
  const { rest, config } = await kubeConnection(loadRolloutCliConfig(), args.context);
  const namespace = args.namespace ?? config.namespace ?? 'default';
  const out = await setImage(rest, namespace, args.name, args.assignments);
  (out.code === 0 ? process.stdout : process.stderr).write(printable(out.text, { keepNewlines: true }));
  return out.code;
}
