import { describe, expect, it } from 'vitest';
import { upstreamSchemas } from './pod-template-crd.ts';
import { CLAIM_FIELDS_BUT_SPEC, CLAIM_SPEC_FIELDS_BUT_RESOURCES, volumeClaimTemplateUpdateRules } from './volume-claim-update.ts';

const keys = (node: unknown): string[] => Object.keys((node as { properties?: Record<string, unknown> }).properties ?? {}).sort();

describe('volumeClaimTemplates update rules', () => {
  it('compare every field of the upstream claim schema (a field added upstream must be added here)', () => {
    const claim = upstreamSchemas().persistentVolumeClaim as { properties: { spec: unknown } };
    expect([...CLAIM_FIELDS_BUT_SPEC, 'spec'].sort()).toEqual(keys(claim));
    expect([...CLAIM_SPEC_FIELDS_BUT_RESOURCES, 'resources'].sort()).toEqual(keys(claim.properties.spec));
  });

  it('name every compared field in the rule', () => {
    const [, same] = volumeClaimTemplateUpdateRules();
    for (const f of CLAIM_SPEC_FIELDS_BUT_RESOURCES) expect(same?.rule).toContain(`t.spec.${f}`);
    for (const f of CLAIM_FIELDS_BUT_SPEC) expect(same?.rule).toContain(`t.${f}`);
  });
});
