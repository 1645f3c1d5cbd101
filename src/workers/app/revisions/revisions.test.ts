import { describe, expect, it } from 'vitest';
import { makeApp, stored } from '../../../../test/unit/app/fixtures.ts';
import type { ControllerRevision, Stored } from '../../../kube/types.ts';
import { newRevision, resolveRevisions, revisionData, revisionHash, safeEncode, truncateHistory } from './revisions.ts';
import { canonicalJson } from '../../../common/canonical-json.ts';

const app = makeApp('web');
const withImage = (tag: string) =>
  makeApp('web', { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: `web:${tag}` }] } } });
const rev = (tag: string, n: number, owner = app.metadata.uid): Stored<ControllerRevision> => {
  const r = stored<ControllerRevision>(newRevision(withImage(tag), revisionData(withImage(tag)), n, 0), `rev-${tag}`, '9');
  r.metadata.ownerReferences = owner ? [{ apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: owner, controller: true }] : [];
  return r;
};

describe('revision names', () => {
  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
  });
  it('the hash depends on the data and the collision count only, and is safe-encoded', () => {
    const d = revisionData(app);
    expect(revisionHash(d, 0)).toBe(revisionHash(structuredClone(d), 0));
    expect(revisionHash(d, 0)).not.toBe(revisionHash(d, 1));
    expect(revisionHash(d, 0)).not.toBe(revisionHash(revisionData(withImage('v9')), 0));
    expect(revisionHash(d, 0)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(safeEncode('0123456789')).toHaveLength(10);
  });
  it('the hash of given data never changes: revision names are persisted on clusters', () => {
    const data = { spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:v1' }] } } } };
    expect(revisionHash(data, 0)).toBe('565fbb4ffb');
    expect(revisionHash(data, 1)).toBe('567b87db59');
  });
  it('names are <app>-<hash> and fit a label value for a 52-character App name', () => {
    const long = makeApp('a'.repeat(52));
    const r = newRevision(long, revisionData(long), 1, 0);
    expect(r.metadata.name).toMatch(/^a{52}-[a-z0-9]+$/);
    expect(r.metadata.name.length).toBeLessThanOrEqual(63);
  });
});

describe('resolveRevisions', () => {
  it.each<[string, Stored<ControllerRevision>[], string[], string]>([
    ['no history: creates revision 1', [], ['createRevision'], 'create'],
    ['unchanged template: reuses the newest', [rev('v0', 1), rev('v1', 2)], [], 'v1'],
    ['rollback: renumbers the equal older revision', [rev('v1', 1), rev('v2', 2)], ['renumberRevision'], 'v1'],
    ['an orphan with the same data: adopts it', [rev('v1', 1, '')], ['adoptRevision'], 'v1'],
    ["someone else's revision with the same data is not ours: a new name", [rev('v1', 1, 'other')], ['createRevision'], 'create'],
  ])('%s', (_name, listed, kinds, expected) => {
    const r = resolveRevisions(withImage('v1'), listed);
    expect(r.actions.map((a) => a.kind)).toEqual(kinds);
    if (expected !== 'create') expect(r.update.metadata.uid).toBe(`rev-${expected}`);
    expect(r.update.revision).toBe(kinds.length === 0 ? 2 : listed.filter((x) => x.metadata.ownerReferences?.[0]?.uid === app.metadata.uid).length + 1);
  });

  it('bumps the collision count past a name taken by other data', () => {
    const target = withImage('v1');
    const clash = newRevision(target, revisionData(withImage('zz')), 1, 0);
    clash.metadata.name = newRevision(target, revisionData(target), 1, 0).metadata.name;
    clash.metadata.ownerReferences = [];
    const r = resolveRevisions(target, [stored<ControllerRevision>(clash, 'rev-clash')]);
    expect(r.collisionCount).toBe(1);
    expect(r.update.metadata.name).not.toBe(clash.metadata.name);
  });

  it('current is status.currentRevision when it exists, else the update revision', () => {
    const a = withImage('v2');
    expect(resolveRevisions({ ...a, status: { currentRevision: rev('v1', 1).metadata.name } }, [rev('v1', 1)]).current.metadata.uid).toBe('rev-v1');
    expect(resolveRevisions({ ...a, status: { currentRevision: 'gone' } }, [rev('v1', 1)]).current).toEqual(resolveRevisions(a, [rev('v1', 1)]).update);
  });
});

describe('truncateHistory', () => {
  const revs = [1, 2, 3, 4, 5].map((n) => rev(`v${n}`, n));
  const names = (tags: string[]) => new Set(tags.map((t) => revs.find((r) => r.metadata.uid === `rev-${t}`)?.metadata.name ?? ''));
  it.each<[number, string[], string[]]>([
    [10, ['v5'], []],
    [2, ['v5'], ['v1', 'v2']],
    [0, ['v5', 'v4'], ['v1', 'v2', 'v3']],
    [0, ['v5', 'v1'], ['v2', 'v3', 'v4']],
    [1, ['v3'], ['v1', 'v2', 'v4']],
  ])('limit %d, live %j → delete %j', (limit, live, deleted) => {
    const actions = truncateHistory(revs, names(live), limit);
    expect(actions.map((a) => (a.kind === 'deleteRevision' ? a.uid : ''))).toEqual(deleted.map((t) => `rev-${t}`));
  });
});

describe('revisions made before a schema default existed', () => {
  const withPort = (port: Record<string, unknown>) =>
    makeApp('web', {
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'web:v1', ports: [{ containerPort: 80, ...port }] }] } },
    });

  it('still match the template the apiserver now returns defaulted: upgrading the CRD rolls no App', () => {
    const old = stored<ControllerRevision>(newRevision(withPort({}), revisionData(withPort({})), 1, 0), 'rev-old', '9');
    old.metadata.ownerReferences = [{ apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: app.metadata.uid, controller: true }];
    const resolved = resolveRevisions(withPort({ protocol: 'TCP' }), [old]);
    expect(resolved.actions).toEqual([]);
    expect(resolved.update.metadata.name).toBe(old.metadata.name);
  });

  it('a real change is still a new revision', () => {
    const old = stored<ControllerRevision>(newRevision(withPort({}), revisionData(withPort({})), 1, 0), 'rev-old', '9');
    old.metadata.ownerReferences = [{ apiVersion: 'apps.ebb.dev/v1alpha1', kind: 'App', name: 'web', uid: app.metadata.uid, controller: true }];
    const resolved = resolveRevisions(withPort({ protocol: 'UDP' }), [old]);
    expect(resolved.actions.map((a) => a.kind)).toEqual(['createRevision']);
  });
});
