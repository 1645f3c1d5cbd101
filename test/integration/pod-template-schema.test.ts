/**
 * The App's pod template and claim templates are typed at admission with the core/v1 schemas: `kubectl apply`
 * refuses a bad quantity, a string port or an unknown field naming the field, `kubectl explain` walks into the
 * template, and the CRD itself still fits client-side `kubectl apply`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { mergePatch } from '../../harness/fakes/store.ts';
import type { App } from '../../src/api/app.ts';
import { API_VERSION, APP_KIND, appRef } from '../../src/api/group.ts';
import { freshNamespace, sandbox } from './support.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KUBECTL = join(ROOT, 'bin', 'kubectl');

type Obj = Record<string, unknown>;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the sandbox with `input` on stdin; resolves with its exit code and output. */
function kubectl(args: string[], input?: string): Promise<Result> {
  return new Promise((done) => {
    const child = execFile(KUBECTL, ['--kubeconfig', sandbox().kubeconfig, ...args], { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

/** An App as a StatefulSet exported from a cluster would look after changing apiVersion and kind. */
function app(name: string, ns: string, patch: Obj = {}): Obj {
  const base = {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name, namespace: ns },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'main',
              image: 'registry.example.com/team/web:v1',
              ports: [{ containerPort: 8080, name: 'http' }],
              resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { creationTimestamp: null, name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          status: { phase: 'Pending' },
        },
      ],
    },
  };
  return mergePatch(base, patch);
}

const strategy = (rollingUpdate: Obj): Obj => ({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate } } });
const container = (fields: Obj): Obj => ({
  spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.example.com/team/web:v1', ...fields }] } } },
});
const both = (a: Obj, b: Obj): Obj => mergePatch(a, b);

describe('pod template schema at admission', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await freshNamespace('tmpl');
  });

  it('kubectl apply accepts an App exported from a StatefulSet and the apiserver applies the core/v1 defaults', async () => {
    const name = uniqueName('ok');
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(app(name, ns)));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain(`app.apps.ebb.dev/${name} created`);
    const stored = await sandbox().rest.get<App>(appRef(ns, name));
    const main = stored.spec.template.spec.containers[0]!;
    expect(main['ports']).toEqual([{ containerPort: 8080, name: 'http', protocol: 'TCP' }]);
    expect(main['resources']).toEqual({ requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } });
    expect(stored.spec.volumeClaimTemplates?.[0]).toEqual({
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    });
  });

  const containerPath = 'spec.template.spec.containers[0]';
  /** [what, patch onto a valid App, what the error must say] */
  const refused: Array<[string, Obj, string[]]> = [
    [
      'a cpu request of "lots" (ReCreate)',
      both(strategy({ podUpdatePolicy: 'ReCreate' }), container({ resources: { requests: { cpu: 'lots' } } })),
      [`${containerPath}.resources.requests.cpu: Invalid value: "lots"`, 'should match'],
    ],
    ['a memory limit of "1 GB"', container({ resources: { limits: { memory: '1 GB' } } }), [`${containerPath}.resources.limits.memory: Invalid value: "1 GB"`]],
    [
      'a string containerPort (InPlaceIfPossible)',
      both(strategy({ podUpdatePolicy: 'InPlaceIfPossible' }), container({ ports: [{ containerPort: 'http' }] })),
      [`${containerPath}.ports[0].containerPort`, 'must be of type integer'],
    ],
    [
      'a string containerPort with maxUnavailable 50%',
      both(strategy({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: '50%' }), container({ ports: [{ containerPort: 'http' }] })),
      [`${containerPath}.ports[0].containerPort`, 'must be of type integer'],
    ],
    [
      'a claim storage request of "big"',
      { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: 'big' } } } }] } },
      ['spec.volumeClaimTemplates[0].spec.resources.requests.storage: Invalid value: "big"'],
    ],
    ['a container field misspelled', container({ imagePullPolizy: 'Always' }), [`unknown field "${containerPath}.imagePullPolizy"`]],
    ['an unknown pod spec field', { spec: { template: { spec: { hostNetwrok: true } } } }, ['unknown field "spec.template.spec.hostNetwrok"']],
    [
      'an unknown claim spec field',
      { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { storageClass: 'fast' } }] } },
      ['unknown field "spec.volumeClaimTemplates[0].spec.storageClass"'],
    ],
  ];

  it.each(refused)('kubectl apply refuses %s, naming the field', async (_what, patch, messages) => {
    const name = uniqueName('bad');
    const result = await kubectl(['apply', '-f', '-'], JSON.stringify(app(name, ns, patch)));
    expect(result.code).not.toBe(0);
    for (const message of messages) expect(result.stderr).toContain(message);
    const get = await kubectl(['get', 'ebapp', name, '-n', ns]);
    expect(get.stderr).toContain('NotFound');
  });

  it('kubectl explain walks into the container resources', async () => {
    const result = await kubectl(['explain', 'ebapp.spec.template.spec.containers.resources']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('FIELD: resources <Object>');
    expect(result.stdout).toMatch(/limits\s+<map\[string\]Object>/);
    expect(result.stdout).toMatch(/requests\s+<map\[string\]Object>/);
    expect(result.stdout).toContain('Requests describes the minimum amount of compute resources required.');
  });

  it('the sample App passes the typed schema (server dry run)', async () => {
    const result = await kubectl(['apply', '--dry-run=server', '-f', join(ROOT, 'deploy', 'samples', 'app.yaml')]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('app.apps.ebb.dev/web created (server dry run)');
  });

  it('client-side kubectl apply of the CRDs fits the last-applied annotation (server dry run)', async () => {
    const result = await kubectl(['apply', '--dry-run=server', '-k', join(ROOT, 'deploy', 'crds')]);
    expect(result.stderr).not.toContain('Too long');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/apps.apps.ebb.dev');
  });
});
