import { describe, expect, it } from 'vitest';
import type { AnalysisRun } from '../../api/analysis.ts';
import type { App } from '../../api/app.ts';
import type { ImageList } from '../../api/image-list.ts';
import { Annotation, Label } from '../../api/keys.ts';
import { explain } from '../../cli/rollout/explain/explain.ts';
import { renderExplanation } from '../../cli/rollout/explain/render.ts';
import type { Pod } from '../../kube/types.ts';
import type { AppView } from './detail-model.ts';
import { chartData, detailBody } from './detail-page.ts';

const NOW = new Date('2026-11-29T12:00:00Z');
const IMAGE = 'registry.example.com/web:v2';

const run: AnalysisRun = {
  name: 'error-rate',
  step: 1,
  phase: 'Running',
  startedAt: '2026-11-29T11:59:00Z',
  successful: 2,
  failed: 1,
  inconclusive: 0,
  measurements: [
    { phase: 'Successful', value: '0.01', measuredAt: '2026-11-29T11:59:00Z' },
    { phase: 'Error', measuredAt: '2026-11-29T11:59:02Z', message: 'timeout' },
    { phase: 'Failed', value: '0.2', measuredAt: '2026-11-29T11:59:04Z', message: '<b>too high</b>' },
  ],
};

const app = {
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { namespace: 'shop', name: 'web', generation: 2 },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: IMAGE }] } },
    imagePrewarm: { enabled: true },
    updateStrategy: { rollingUpdate: { canary: { steps: [{ replicas: 1 }, { analysis: ['error-rate'] }, { replicas: '100%' }] } } },
  },
  status: {
    observedGeneration: 2,
    replicas: 2,
    currentReplicas: 1,
    updatedReplicas: 1,
    currentRevision: 'web-1',
    updateRevision: 'web-2',
    canary: { step: 1 },
    prewarm: { nodesRequested: 2, nodesPulled: 1, nodesFailed: 1 },
    analysis: { revision: 'web-2', runs: [run] },
    conditions: [{ type: 'Progressing', status: 'True', reason: 'CanaryStep', message: 'canary step 2 of 3', lastTransitionTime: '2026-11-29T11:58:00Z' }],
  },
} as unknown as App;

const pod = (ordinal: number, revision: string, node: string, annotations: Record<string, string> = {}): Pod =>
  ({
    metadata: { name: `web-${ordinal}`, namespace: 'shop', labels: { app: 'web', [Label.revision]: revision }, annotations },
    spec: { nodeName: node, containers: [{ name: 'main', image: revision === 'web-2' ? IMAGE : 'registry.example.com/web:v1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', restartCount: 3 }] },
  }) as unknown as Pod;

const list = (node: string, phase: string, message?: string): ImageList =>
  ({
    metadata: { name: node },
    spec: { images: [{ image: IMAGE }] },
    status: { images: [{ image: IMAGE, phase, ...(message ? { message } : {}) }] },
  }) as unknown as ImageList;

function view(): AppView {
  const pods = [
    pod(1, 'web-1', 'node-b'),
    pod(0, 'web-2', 'node-a', { [Annotation.restartBaseline]: JSON.stringify({ revision: 'web-2', restarts: { main: 3 } }) }),
  ];
  const lists = [list('node-a', 'Pulled'), list('node-b', 'Failed', 'pull access denied')];
  const explanation = explain({ app, pods, imageLists: lists, plan: undefined, queue: undefined, notes: [], now: NOW });
  const events = [{ at: '2026-11-29T11:59:04Z', type: 'Warning', reason: 'AnalysisMeasurementFailed', message: '<script>x</script>', count: 1, from: 'ebb' }];
  return {
    app,
    pods,
    events,
    explanation,
    explainText: renderExplanation(explanation, { tty: false }),
    notes: ['Events: forbidden to the watcher'],
    at: NOW.toISOString(),
  };
}

describe("one App's page", () => {
  const body = detailBody('/rollouts', view()).text;

  it('shows the revisions with their images, the current canary step, and each pod by ordinal', () => {
    expect(body).toMatch(/stable \(current\)<\/th><td><code>web-1<\/code><\/td><td>1<\/td><td>registry\.example\.com\/web:v1/);
    expect(body).toMatch(/update<\/th><td><code>web-2<\/code><\/td><td>1<\/td><td>registry\.example\.com\/web:v2/);
    expect(body).toContain('<li class="current" aria-current="step">run the checks error-rate</li>');
    expect(body.indexOf('<td>web-0</td>')).toBeLessThan(body.indexOf('<td>web-1</td>'));
    expect(body).toMatch(/<td>web-0<\/td><td>update \(web-2\)<\/td><td>ready<\/td><td>updated in place<\/td><td>3<\/td><td>node-a<\/td>/);
    expect(body).toMatch(/<td>web-1<\/td><td>stable \(web-1\)<\/td><td>ready<\/td><td>created at its revision<\/td>/);
  });

  it('charts the numeric measurements and lists the check, escaped', () => {
    expect(body).toContain('data-chart="chart-0"');
    expect(body).toContain('<td>error-rate</td><td>1</td><td>Running</td><td>2</td><td>1</td>');
    expect(body).toContain('Failed 0.2: &lt;b&gt;too high&lt;/b&gt;');
    expect(body).not.toContain('<script>x</script>');
    expect(chartData(run)).toEqual([
      [Date.parse(run.startedAt) / 1000, Date.parse(run.startedAt) / 1000 + 2, Date.parse(run.startedAt) / 1000 + 4],
      [0.01, null, 0.2],
    ]);
    expect(chartData({ ...run, measurements: [{ phase: 'Successful', value: 'ok', measuredAt: run.startedAt }] })).toBeUndefined();
  });

  it('shows pre-warm node by node with why a pull failed, the Events, explain, and what could not be read', () => {
    expect(body).toMatch(/<td>node-a<\/td><td>Pulled<\/td><td>1\/1<\/td>/);
    expect(body).toMatch(/<td>node-b<\/td><td>Failed<\/td><td>0\/1<\/td><td>registry\.example\.com\/web:v2: pull access denied<\/td><td>web-1<\/td>/);
    expect(body).toContain('AnalysisMeasurementFailed');
    expect(body).toContain('kubectl ebb rollout explain app/web -n shop');
    expect(body).toContain('Not shown: Events: forbidden to the watcher');
  });
});

describe("an App's Events as the page reads them", () => {
  it('takes the time an Event carries, past the nulls of the core/v1 view', async () => {
    const { eventRow } = await import('./detail-read.ts');
    const row = eventRow({
      type: 'Warning',
      reason: 'RolloutAborted',
      lastTimestamp: null,
      firstTimestamp: null,
      eventTime: '2026-11-29T12:00:00.000000Z',
      series: null,
    });
    expect(row).toMatchObject({ at: '2026-11-29T12:00:00.000000Z', count: 1 });
    expect(eventRow({ series: { lastObservedTime: '2026-11-29T12:05:00Z', count: 4 }, eventTime: '2026-11-29T12:00:00Z' })).toMatchObject({
      at: '2026-11-29T12:05:00Z',
      count: 4,
    });
  });
});
