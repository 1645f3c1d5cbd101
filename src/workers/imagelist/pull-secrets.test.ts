import { describe, expect, it } from 'vitest';
import { copyLabelValue, PULL_SECRET_COPY_LABEL, pullSecretCopyName } from '../../api/pull-secret-copy.ts';
import { planCopies, type CopyInput, type SecretLike } from './pull-secrets.ts';

const list = { name: 'node-a', uid: 'list-uid' };
const ref = { namespace: 'team', name: 'regcred' };
const pullSecret = (value = 'e30='): SecretLike => ({
  metadata: { name: 'regcred' },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': value, other: 'eA==' },
});
const input = (o: Partial<CopyInput>): CopyInput => ({
  list,
  namespace: 'ebb-node',
  named: [ref],
  sources: new Map([['team/regcred', pullSecret()]]),
  copies: [],
  ...o,
});
const copyName = pullSecretCopyName('node-a', ref);

describe('planCopies', () => {
  it('copies a named pull secret: its type and credentials only, owned by the ImageList, under the derived name', () => {
    const [action, ...rest] = planCopies(input({}));
    expect(rest).toEqual([]);
    expect(action).toMatchObject({
      kind: 'apply',
      name: copyName,
      body: {
        metadata: {
          name: copyName,
          namespace: 'ebb-node',
          labels: { [PULL_SECRET_COPY_LABEL]: copyLabelValue('node-a') },
          annotations: { 'apps.ebb.dev/image-list': 'node-a', 'apps.ebb.dev/pull-secret': 'team/regcred' },
          ownerReferences: [{ kind: 'ImageList', name: 'node-a', uid: 'list-uid' }],
        },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': 'e30=' },
      },
    });
  });

  it('writes nothing when the copy is up to date, and again when the Secret changed', () => {
    const copy: SecretLike = {
      metadata: { name: copyName, uid: 'c1', ownerReferences: [{ uid: 'list-uid' }] },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'e30=' },
    };
    expect(planCopies(input({ copies: [copy] }))).toEqual([]);
    expect(planCopies(input({ copies: [copy], sources: new Map([['team/regcred', pullSecret('bmV3')]]) })).map((a) => a.kind)).toEqual(['apply']);
  });

  it('removes copies no entry names, and those whose Secret is gone or is no pull secret', () => {
    const stale: SecretLike = { metadata: { name: 'ebb-pull-old', uid: 'u-old' } };
    const current: SecretLike = { metadata: { name: copyName, uid: 'u-cur', ownerReferences: [{ uid: 'list-uid' }] } };
    expect(planCopies(input({ named: [], copies: [stale] }))).toEqual([{ kind: 'delete', name: 'ebb-pull-old', uid: 'u-old' }]);
    expect(planCopies(input({ sources: new Map(), copies: [current] }))).toEqual([{ kind: 'delete', name: copyName, uid: 'u-cur' }]);
    const opaque = { metadata: { name: 'regcred' }, type: 'Opaque', data: { '.dockerconfigjson': 'e30=' } };
    expect(planCopies(input({ sources: new Map([['team/regcred', opaque]]), copies: [current] }))).toEqual([{ kind: 'delete', name: copyName, uid: 'u-cur' }]);
  });

  it('names copies per ImageList and Secret', () => {
    expect(pullSecretCopyName('node-a', ref)).toMatch(/^ebb-pull-[0-9a-f]{40}$/);
    expect(pullSecretCopyName('node-b', ref)).not.toBe(copyName);
    expect(pullSecretCopyName('node-a', { namespace: 'team', name: 'other' })).not.toBe(copyName);
  });
});
