/**
 * The protobuf decoder of pods: messages encoded here with the same schema stand in for the apiserver (the
 * field numbers themselves are checked against the real apiserver, test/integration/app/pod-protobuf.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { messageType } from './codec.ts';
import { decodePod, decodePodList, decodeStatus, ProtobufError, unwrap } from './envelope.ts';

const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

function encode(name: string, value: object): Uint8Array {
  const type = messageType(name);
  return type.encode(type.fromObject(value)).finish();
}

/** What the apiserver sends: magic, then a runtime.Unknown holding the object. */
function envelope(kind: string, raw: Uint8Array, extra: object = {}): Uint8Array {
  const unknown = encode('Unknown', { typeMeta: { apiVersion: 'v1', kind }, raw, ...extra });
  return Uint8Array.from([...MAGIC, ...unknown]);
}

const secs = (iso: string) => ({ seconds: Date.parse(iso) / 1000 });

/** A pod as the apiserver writes it: every non-pointer field present, zero or not. */
const wirePod = {
  metadata: {
    name: 'web-0',
    generateName: '',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '42',
    generation: 0,
    creationTimestamp: secs('2026-01-02T03:04:05Z'),
    deletionTimestamp: secs('2026-01-02T03:05:00Z'),
    deletionGracePeriodSeconds: 0,
    labels: { app: 'web', empty: '' },
    annotations: {},
    ownerReferences: [{ apiVersion: 'ebb.dev/v1', kind: 'App', name: 'web', uid: 'a-1', controller: true, blockOwnerDeletion: false }],
    finalizers: ['example.com/hold'],
  },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'example.com/app:1',
        imagePullPolicy: '',
        resources: { requests: { cpu: { string: '500m' }, memory: { string: '64Mi' } }, limits: {} },
        readinessProbe: { initialDelaySeconds: 0, periodSeconds: 5 },
      },
    ],
    initContainers: [],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 0,
    nodeName: '',
    hostname: 'web-0',
    subdomain: '',
    volumes: [
      { name: 'data', volumeSource: { persistentVolumeClaim: { claimName: 'data-web-0', readOnly: false } } },
      { name: 'tmp', volumeSource: {} },
    ],
  },
  status: {
    phase: 'Running',
    observedGeneration: 2 ** 40,
    conditions: [{ type: 'Ready', status: 'False', lastProbeTime: {}, lastTransitionTime: secs('2026-01-02T03:04:06Z'), reason: '', message: '' }],
    containerStatuses: [
      {
        name: 'app',
        image: 'example.com/app:1',
        imageID: '',
        containerID: '',
        ready: false,
        restartCount: 0,
        started: false,
        state: { running: { startedAt: secs('2026-01-02T03:04:07Z') } },
        lastState: {},
        allocatedResources: { cpu: { string: '500m' } },
      },
    ],
  },
};

describe('decodePod', () => {
  const pod = decodePod(envelope('Pod', encode('Pod', wirePod)));

  it('gives the JSON encoding of the fields: zero values left out unless JSON prints them', () => {
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-0',
        namespace: 'shop',
        uid: 'u-1',
        resourceVersion: '42',
        creationTimestamp: '2026-01-02T03:04:05Z',
        deletionTimestamp: '2026-01-02T03:05:00Z',
        deletionGracePeriodSeconds: 0,
        labels: { app: 'web', empty: '' },
        ownerReferences: [{ apiVersion: 'ebb.dev/v1', kind: 'App', name: 'web', uid: 'a-1', controller: true, blockOwnerDeletion: false }],
        finalizers: ['example.com/hold'],
      },
      spec: {
        containers: [
          { name: 'app', image: 'example.com/app:1', resources: { requests: { cpu: '500m', memory: '64Mi' } }, readinessProbe: { periodSeconds: 5 } },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        hostname: 'web-0',
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }, { name: 'tmp' }],
      },
      status: {
        phase: 'Running',
        observedGeneration: 2 ** 40,
        conditions: [{ type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: '2026-01-02T03:04:06Z' }],
        containerStatuses: [
          {
            name: 'app',
            image: 'example.com/app:1',
            imageID: '',
            ready: false,
            restartCount: 0,
            started: false,
            state: { running: { startedAt: '2026-01-02T03:04:07Z' } },
            lastState: {},
            allocatedResources: { cpu: '500m' },
          },
        ],
      },
    });
  });

  it('leaves pointers that were not sent absent, and a zero creation time out', () => {
    const bare = decodePod(envelope('Pod', encode('Pod', { metadata: { name: 'p', creationTimestamp: {} }, spec: {}, status: {} })));
    expect(bare).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, status: {} });
  });

  it('prints the epoch as a time, not as the zero time', () => {
    const epoch = decodePod(envelope('Pod', encode('Pod', { metadata: { deletionTimestamp: { seconds: 0 } } })));
    expect(epoch.metadata.deletionTimestamp).toBe('1970-01-01T00:00:00Z');
  });

  it('refuses an answer that is not a Pod, has no magic, or is compressed', () => {
    expect(() => decodePod(envelope('Status', new Uint8Array()))).toThrow(/expected a Pod/);
    expect(() => decodePod(encode('Pod', wirePod))).toThrow(ProtobufError);
    expect(() => unwrap(envelope('Pod', new Uint8Array(), { contentEncoding: 'gzip' }))).toThrow(/content encoding gzip/);
  });
});

describe('decodePodList', () => {
  it('gives the list metadata and items without apiVersion and kind', () => {
    const raw = encode('PodList', {
      metadata: { resourceVersion: '77', continue: 'tok', remainingItemCount: 3 },
      items: [wirePod, { metadata: { name: 'web-1' } }],
    });
    const list = decodePodList(envelope('PodList', raw));
    expect(list.metadata).toEqual({ resourceVersion: '77', continue: 'tok', remainingItemCount: 3 });
    expect(list.items.map((p) => p.metadata.name)).toEqual(['web-0', 'web-1']);
    expect(list.items[0]).not.toHaveProperty('kind');
    expect(list.items[1]).toEqual({ metadata: { name: 'web-1' } });
  });

  it('gives an empty list for an empty answer', () => {
    expect(decodePodList(envelope('PodList', encode('PodList', { metadata: { resourceVersion: '5' } })))).toMatchObject({
      metadata: { resourceVersion: '5' },
      items: [],
    });
  });
});

describe('decodeStatus', () => {
  it("reads an error answer's reason and message, and nothing from what is not a Status", () => {
    const status = encode('Status', { status: 'Failure', message: 'pods "x" not found', reason: 'NotFound', code: 404 });
    expect(decodeStatus(envelope('Status', status))).toEqual({ status: 'Failure', message: 'pods "x" not found', reason: 'NotFound', code: 404 });
    expect(decodeStatus(envelope('Pod', encode('Pod', wirePod)))).toBeUndefined();
    expect(decodeStatus(Uint8Array.of(1, 2, 3))).toBeUndefined();
  });
});
