/**
 * Splices the upstream schemas of the pod template and the claim templates (the generated
 * `pod-template.schema.json`) into the structural schema of `App.spec`, with ebb's rules from
 * `pod-template.ts` laid over them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRecord } from '../common/guards.ts';
import { EXTRA_TEMPLATE_FIELDS } from './pod-template.ts';
import { overlaySchema } from './schema-overlay.ts';
import { toStructural, type JSONSchemaProps } from './structural.ts';
import { isUpstreamSchemas, UPSTREAM_SCHEMA_FILE, UpstreamSchemaError, type UpstreamSchemas } from './upstream-schema.ts';

let cached: UpstreamSchemas | undefined;

/** The committed generated schemas (read once). */
export function upstreamSchemas(): UpstreamSchemas {
  if (cached) return cached;
  const parsed: unknown = JSON.parse(readFileSync(join(import.meta.dirname, UPSTREAM_SCHEMA_FILE), 'utf8'));
  if (!isUpstreamSchemas(parsed)) throw new UpstreamSchemaError(`${UPSTREAM_SCHEMA_FILE} is not a generated schema file: run \`make crds\``);
  cached = parsed;
  return parsed;
}

function prop(spec: JSONSchemaProps, name: string): JSONSchemaProps {
  const props = spec['properties'];
  const node = isRecord(props) ? props[name] : undefined;
  if (!isRecord(node)) throw new UpstreamSchemaError(`.spec.${name} is not declared in the App spec schema`);
  return node;
}

function withoutDescriptions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (!isRecord(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== 'description')
      .map(([k, v]) => [k, withoutDescriptions(v)]),
  );
}

/**
 * A claim template's `status` keeps its schema (manifests copied from `kubectl get sts -o yaml` carry
 * `status.phase`, and strict field validation must accept them) but not its descriptions: nothing reads the
 * status of a template, and its upstream text costs about 7 KB of the CRD's annotation budget.
 */
function withoutStatusDescriptions(claim: JSONSchemaProps): JSONSchemaProps {
  const props = claim['properties'];
  if (!isRecord(props) || !isRecord(props['status'])) return claim;
  return { ...claim, properties: { ...props, status: withoutDescriptions(props['status']) } };
}

/**
 * `spec` (the structural schema of App.spec) with `template` and `volumeClaimTemplates[]` replaced by the
 * upstream schemas overlaid with ebb's. The result passes the structural checks again and has sorted keys.
 */
export function withUpstreamTemplateSchemas(spec: JSONSchemaProps, upstream: UpstreamSchemas = upstreamSchemas()): JSONSchemaProps {
  const opts = { extraFields: EXTRA_TEMPLATE_FIELDS };
  const template = overlaySchema(upstream.podTemplateSpec, prop(spec, 'template'), '.spec.template', opts);
  const claimsArray = prop(spec, 'volumeClaimTemplates');
  const claimItems = claimsArray['items'];
  if (!isRecord(claimItems)) throw new UpstreamSchemaError('.spec.volumeClaimTemplates has no items schema');
  const claims = {
    ...claimsArray,
    items: withoutStatusDescriptions(overlaySchema(upstream.persistentVolumeClaim, claimItems, '.spec.volumeClaimTemplates[]', opts)),
  };
  const properties = { ...(spec['properties'] as JSONSchemaProps), template, volumeClaimTemplates: claims };
  return toStructural({ ...spec, properties }, '.spec');
}
