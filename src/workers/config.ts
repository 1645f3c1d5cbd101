import type { LogLevel } from '../common/log.ts';
import { HTTP_SETTINGS, KUBE_SETTINGS, LOG_SETTINGS, PULL_SECRET_NAMESPACE_SETTING, kubeAccessOf, type KubeAccess } from '../common/process-settings.ts';
import { frozen, parseSettings, table, type Env } from '../common/settings.ts';
import { formatDuration } from '../common/duration.ts';
import { MAX_IMAGES_PER_NODE } from '../api/image-list.ts';
import { DEFAULT_PREWARM_POLICY, type PrewarmPolicy } from './app/model/prewarm-policy.ts';
import type { NamespaceLimits } from './shared/pull-budget.ts';
import { parseNamespaceCap, type NamespaceCap } from '../queue/namespace-gate.ts';
import { DEFAULT_QUARANTINE_LIMIT } from '../queue/quarantine.ts';
import { QUARANTINE_RETRIES } from './quarantine-plan.ts';
import { QUEUE_SETTINGS, queueConfigOf, type QueueConfig } from '../queue/settings.ts';
import { REDIS_LIVENESS_SETTINGS } from '../queue/redis-settings.ts';
import { VIEW_SETTINGS } from '../view/settings.ts';
import { NETWORK_SCOPES } from './egress/addresses.ts';
import { ALLOW_ENTRY, allowEntries } from './egress/allowlist.ts';
import type { EgressPolicy } from './egress/outbound.ts';

/** The worker's configuration: parsed and validated once, frozen, passed down. */
export interface WorkerConfig {
  readonly queue: QueueConfig;
  /** Where the apiserver is (KUBECONFIG, or the in-cluster service settings), and the deadline of a request. */
  readonly kube: KubeAccess;
  readonly httpAddress: string;
  readonly httpPort: number;
  /** How long SIGTERM waits for running reconciles before the worker exits anyway. */
  readonly shutdownTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** Where ImageList pull secrets are copied for the node daemons; undefined: pull secrets are not used. */
  readonly pullSecretNamespace: string | undefined;
  /** Reconciles of one object killed while running alone on their worker, in a row, at which it is quarantined. */
  readonly quarantineAfter: number;
  /** A quarantined object's first retry comes this long after it was held (doubling with each hold in a row). */
  readonly quarantineRetryAfterMs: number;
  /** Reconciles of one namespace running at once, all workers together (a count, 0: no cap, or a share of the live slots). */
  readonly namespaceConcurrency: NamespaceCap;
  /** Web and Prometheus measurements this worker takes at once, off its reconcile slots; 0: taken in the reconciles. */
  readonly measureConcurrency: number;
  /** Measurements of one namespace running at once, all workers together (a count, 0: no cap, or a share of the live measure slots). */
  readonly measureNamespaceConcurrency: NamespaceCap;
  /** Where rollout notifications are POSTed; undefined: none are sent. */
  readonly notifyWebhookUrl: string | undefined;
  /** Each namespace's notifications also go to the webhook its Secret `ebb-notify` names. */
  readonly notifyNamespaceWebhooks: boolean;
  /** How long a namespace's webhook Secret, or its absence, read once serves its deliveries; 0: read at each. */
  readonly notifySecretCacheMs: number;
  /** /healthz fails once Redis has been out of reach this long; 0: never. */
  readonly redisUnhealthyAfterMs: number;
  /** Pre-warm pulls in progress at once across the cluster (every App, every worker). */
  readonly prewarmPullBudget: number;
  /** One namespace's share of the pull budget, and the ImageList entries its Apps and ImagePullJobs hold together. */
  readonly prewarmNamespaceLimits: NamespaceLimits;
  /** The limits of each App's pre-warming. */
  readonly prewarmPolicy: PrewarmPolicy;
  /** `on`: repeated Events are aggregated (series, combined, rate-limited); `off`: each written as its own object. */
  readonly eventCorrelation: EventCorrelationMode;
  /** Where web and Prometheus checks and notifications may connect. */
  readonly egress: EgressPolicy;
  /** Whether App reconciles read the shared view the watcher writes (`src/view/`) when it is whole and fresh enough. */
  readonly view: boolean;
}

export const KUBE_PROTOBUF_MODES = ['on', 'off'] as const;

export const EVENT_CORRELATION_MODES = ['on', 'off'] as const;
export type EventCorrelationMode = (typeof EVENT_CORRELATION_MODES)[number];

/** Everything `ebb worker` reads. */
export const WORKER_SETTINGS = table(
  {
    ...KUBE_SETTINGS.entries,
    ...LOG_SETTINGS.entries,
    ...HTTP_SETTINGS.entries,
    ...QUEUE_SETTINGS.entries,
    ...REDIS_LIVENESS_SETTINGS.entries,
    ...VIEW_SETTINGS.entries,
    pullSecretNamespace: PULL_SECRET_NAMESPACE_SETTING,
    prewarmPullBudget: {
      name: 'EBB_PREWARM_PULL_BUDGET',
      type: 'int',
      default: 32,
      min: 1,
      max: 100_000,
      doc: "pre-warm pulls in progress at once across the cluster, every App counted (one pull: one App's images on one node); the nodes past it wait their turn",
    },
    prewarmNamespacePulls: {
      name: 'EBB_PREWARM_NAMESPACE_PULLS',
      type: 'int',
      default: 16,
      min: 1,
      max: 100_000,
      doc: "pre-warm pulls of one namespace's Apps and ImagePullJobs in progress at once (its share of EBB_PREWARM_PULL_BUDGET); its nodes past it wait their turn",
    },
    prewarmNamespaceEntries: {
      name: 'EBB_PREWARM_NAMESPACE_ENTRIES',
      type: 'int',
      default: 512,
      min: 1,
      max: 10_000_000,
      doc: "ImageList entries (images × nodes) one namespace's Apps and ImagePullJobs hold together; past it no node is requested (condition ImagesPrewarmed or the job's Complete condition says so), entries already written stay",
    },
    prewarmMaxImagesPerNode: {
      name: 'EBB_PREWARM_MAX_IMAGES_PER_NODE',
      type: 'int',
      default: DEFAULT_PREWARM_POLICY.maxImagesPerNode,
      min: 1,
      max: MAX_IMAGES_PER_NODE,
      doc: "images one App's pre-warming lists on one node at most (the first in sorted order; condition ImagesPrewarmed says how many were left out)",
    },
    prewarmPinMax: {
      name: 'EBB_PREWARM_PIN_MAX',
      type: 'duration',
      default: formatDuration(DEFAULT_PREWARM_POLICY.pinMaxMs),
      min: '0',
      max: '8760h',
      doc: "a rollout paused longer than this (condition Paused True since then) stops pinning its images: its ImageList entries are removed so the kubelet's image garbage collection may reclaim them, and requested again when the rollout goes on (`0`: no limit)",
    },
    prewarmAnswerTimeout: {
      name: 'EBB_PREWARM_ANSWER_TIMEOUT',
      type: 'duration',
      default: formatDuration(DEFAULT_PREWARM_POLICY.answerTimeoutMs),
      min: '0',
      max: '24h',
      doc: 'a node asked to pre-warm whose daemon reported none of the images this long after the request gives its `parallelism` slot and its share of the pull budget back; its entries stay (`0`: never)',
    },
    shutdownTimeout: {
      name: 'EBB_SHUTDOWN_TIMEOUT',
      type: 'duration',
      default: '50s',
      min: '0',
      max: '1h',
      doc: 'how long SIGTERM waits for running reconciles; the worker exits at the latest 5s later',
    },
    namespaceConcurrency: {
      name: 'EBB_NAMESPACE_CONCURRENCY',
      type: 'string',
      default: '75%',
      pattern: /^(0|[1-9]\d{0,5}|([1-9]\d?|100)%)$/,
      format: 'be 0 (no cap), a count from 1 to 999999, or a percentage from 1% to 100%',
      doc: "reconciles of one namespace's Apps running at once, all workers together: a count, or a percentage of the slots of the workers running now (each worker's `EBB_WORKER_CONCURRENCY`, added up; at least 1), so the rest stay free for other namespaces; `0`: no cap. A job over the cap waits 0.5–1 s in the delayed set, spending no attempt",
    },
    measureConcurrency: {
      name: 'EBB_MEASURE_CONCURRENCY',
      type: 'int',
      default: 8,
      min: 0,
      max: 1000,
      doc: "web and Prometheus check measurements one worker takes at once, in a pool of its own (the `measure` queue): a check that answers slowly holds one of these, never a reconcile slot; each answer is capped at 1 MiB, so the default keeps a worker's memory bounded. `0`: this worker takes the measurements inside its reconciles (each holding its slot for up to the check's timeout)",
    },
    measureNamespaceConcurrency: {
      name: 'EBB_MEASURE_NAMESPACE_CONCURRENCY',
      type: 'string',
      default: '50%',
      pattern: /^(0|[1-9]\d{0,5}|([1-9]\d?|100)%)$/,
      format: 'be 0 (no cap), a count from 1 to 999999, or a percentage from 1% to 100%',
      doc: "measurements of one namespace's checks running at once, all workers together: a count, or a percentage of the measure slots of the workers running now (each worker's `EBB_MEASURE_CONCURRENCY`, added up; at least 1); `0`: no cap. A measurement over the cap waits 1–2 s in the delayed set",
    },
    notifyWebhookUrl: {
      name: 'EBB_NOTIFY_WEBHOOK_URL',
      type: 'string',
      secret: true,
      pattern: /^https?:\/\/\S+$/,
      format: 'be an http:// or https:// URL',
      doc: 'POST a JSON notification (Slack-compatible `text`, details in `ebb`) when a rollout is aborted, paused, past its deadline or complete; retried with backoff, never holding a rollout',
    },
    notifyNamespaceWebhooks: {
      name: 'EBB_NOTIFY_NAMESPACE_WEBHOOKS',
      type: 'switch',
      default: true,
      doc: "also send each namespace's notifications to the webhook its owner names: key `url` of the Secret `ebb-notify` in that namespace, read when it delivers and kept for `EBB_NOTIFY_SECRET_CACHE` (the worker may get Secrets of that name only), reached through the namespace's `EBB_CHECK_ALLOWED_HOSTS` and `EBB_CHECK_NETWORKS`; `false`: only `EBB_NOTIFY_WEBHOOK_URL`",
    },
    notifySecretCache: {
      name: 'EBB_NOTIFY_SECRET_CACHE',
      type: 'duration',
      default: '30s',
      min: '0',
      max: '10m',
      doc: "how long the worker keeps a namespace's Secret `ebb-notify` (its `url`, or that there is none) after reading it: one read serves that namespace's deliveries for this long, so a Secret created, changed or deleted applies to deliveries that start at most this long later; at most 1,024 namespaces are kept (least recently used forgotten first); `0`: read at each delivery",
    },
    kubeProtobuf: {
      name: 'EBB_KUBE_PROTOBUF',
      type: 'enum',
      values: KUBE_PROTOBUF_MODES,
      default: 'on',
      doc: "`on`: an App's pods are read in the apiserver's protobuf encoding (as kube-controller-manager reads them), decoding only the fields ebb uses, with JSON as the fallback when the server answers in JSON; `off`: in JSON",
    },
    eventCorrelation: {
      name: 'EBB_EVENT_CORRELATION',
      type: 'enum',
      values: EVENT_CORRELATION_MODES,
      default: 'on',
      doc: "`on`: an App's repeated Event becomes one Event whose `series` count grows (patched at most once a minute), similar Events beyond 10 are combined, and each App writes at most 25 Events, then one per 5 minutes; `off` (diagnostic, for comparing Event traffic): every Event is written as its own object",
    },
    checkAllowedHosts: {
      name: 'EBB_CHECK_ALLOWED_HOSTS',
      type: 'list',
      item: ALLOW_ENTRY,
      itemFormat: 'NAMESPACE/HOST[:PORT] (NAMESPACE a namespace or *; HOST a name, *.domain, an IP ([...] for IPv6) or *)',
      defaultDoc: 'none: every web and Prometheus check is refused (inconclusive)',
      doc: "the hosts each namespace's web and Prometheus checks may call, as entries `NAMESPACE/HOST[:PORT]` (NAMESPACE `*` for every namespace; HOST a name, `*.domain`, an IP or `*`), e.g. `*/prometheus.monitoring.svc:9090,team-a/*.team-a.svc`; a check to another host is inconclusive and names this setting, and an allowed host is still refused at an address `EBB_CHECK_NETWORKS` refuses",
    },
    checkNetworks: {
      name: 'EBB_CHECK_NETWORKS',
      type: 'enum',
      values: NETWORK_SCOPES,
      default: 'private',
      doc: 'the addresses checks and notification deliveries may connect to, judged after resolving the name and dialled as judged: `public`; `private` (also RFC 1918, 100.64/10 and IPv6 unique-local, where in-cluster services are); `local` (also loopback: sandboxes and tests only). Link-local (cloud metadata), unspecified, multicast and reserved addresses never',
    },
    quarantineAfter: {
      name: 'EBB_QUARANTINE_AFTER',
      type: 'int',
      default: DEFAULT_QUARANTINE_LIMIT,
      min: 1,
      max: 100,
      doc: 'reconciles of one object killed while running alone on their worker (a run that died beside others only makes its next run wait to run alone), in a row, before the object is quarantined; a change to the object does not lift it',
    },
    quarantineRetryAfter: {
      name: 'EBB_QUARANTINE_RETRY_AFTER',
      type: 'duration',
      default: '5m',
      min: '1s',
      max: '24h',
      doc: `a quarantined object is retried alone this long after it was held, then after twice as long for each retry killed again; after ${QUARANTINE_RETRIES} such retries only \`ebb queue release\` lets it run`,
    },
  },
  QUEUE_SETTINGS.checks,
);

/** Pure parser; `loadWorkerConfig` feeds it process.env. Throws one ConfigError listing every problem. */
export function parseWorkerConfig(env: Env): WorkerConfig {
  const v = parseSettings(WORKER_SETTINGS, env);
  return frozen({
    queue: queueConfigOf(v),
    kube: { ...kubeAccessOf(v), protobuf: v.kubeProtobuf === 'on' },
    httpAddress: v.httpAddress,
    httpPort: v.httpPort,
    shutdownTimeoutMs: v.shutdownTimeout,
    logLevel: v.logLevel,
    pullSecretNamespace: v.pullSecretNamespace,
    quarantineAfter: v.quarantineAfter,
    quarantineRetryAfterMs: v.quarantineRetryAfter,
    namespaceConcurrency: parseNamespaceCap(v.namespaceConcurrency),
    measureConcurrency: v.measureConcurrency,
    measureNamespaceConcurrency: parseNamespaceCap(v.measureNamespaceConcurrency),
    notifyWebhookUrl: v.notifyWebhookUrl,
    notifyNamespaceWebhooks: v.notifyNamespaceWebhooks,
    notifySecretCacheMs: v.notifySecretCache,
    redisUnhealthyAfterMs: v.redisUnhealthyAfter,
    prewarmPullBudget: v.prewarmPullBudget,
    prewarmNamespaceLimits: frozen({ pulls: v.prewarmNamespacePulls, entries: v.prewarmNamespaceEntries }),
    eventCorrelation: v.eventCorrelation,
    view: v.view,
    egress: frozen({ allowedHosts: allowEntries(v.checkAllowedHosts), networks: v.checkNetworks }),
    prewarmPolicy: frozen({ maxImagesPerNode: v.prewarmMaxImagesPerNode, pinMaxMs: v.prewarmPinMax, answerTimeoutMs: v.prewarmAnswerTimeout }),
  });
}

export function loadWorkerConfig(): WorkerConfig {
  return parseWorkerConfig(process.env);
}
