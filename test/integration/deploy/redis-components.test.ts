/**
 * The Redis install options, as the real `kubectl kustomize` renders deploy/ with them: redis-external and
 * redis-sentinel remove the bundled Redis, and the watcher's and worker's environments (Secret values filled in
 * as the kubelet would) are settings their processes accept, in the mode each option promises.
 */
import { describe, expect, it } from 'vitest';
import { parseWatcherConfig } from '../../../src/watcher/config.ts';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { envOf, renderWith, type Manifest } from './components.ts';

/** The ports the watcher's and the workers' egress admits to Redis (NetworkPolicy ebb-redis-clients). */
const redisEgressPorts = (objects: Manifest[]): unknown[] => {
  const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'ebb-redis-clients') as {
    spec?: { egress?: { ports?: { port: unknown }[] }[] };
  };
  return (policy.spec?.egress ?? []).flatMap((r) => (r.ports ?? []).map((p) => p.port));
};

const bundled = (objects: Manifest[]): string[] => objects.filter((o) => o.metadata.name === 'ebb-redis' && o.kind !== 'Secret').map((o) => o.kind);

describe('Redis install options', () => {
  it('redis-external: the URL and password come from ebb-redis-external, TLS included', async () => {
    const objects = await renderWith('redis-external');
    expect(bundled(objects)).toEqual([]);
    // The egress to the bundled Redis's pods becomes the usual Redis ports (the installer narrows the address).
    expect(redisEgressPorts(objects)).toEqual([6379, 6380]);
    const secrets = { 'ebb-redis-external/url': 'rediss://ebb@redis.example.com:6380', 'ebb-redis-external/password': 'pw' };
    for (const [deployment, parse] of [
      ['ebb-watcher', parseWatcherConfig],
      ['ebb-worker', parseWorkerConfig],
    ] as const) {
      const cfg = parse(envOf(objects, deployment, secrets));
      expect(cfg.queue.redis, deployment).toMatchObject({
        mode: 'standalone',
        host: 'redis.example.com',
        port: 6380,
        auth: { username: 'ebb', password: 'pw' },
      });
      expect(cfg.queue.redis.tls, `${deployment}: rediss:// means TLS`).toBeDefined();
    }
  });

  it('redis-sentinel: sentinel mode with the master name, sentinels and both passwords', async () => {
    const objects = await renderWith('redis-sentinel');
    expect(bundled(objects)).toEqual([]);
    expect(redisEgressPorts(objects)).toEqual([6379, 6380, 26379]);
    const secrets = { 'ebb-redis-sentinel/password': 'pw', 'ebb-redis-sentinel/sentinel-password': 'spw' };
    for (const [deployment, parse] of [
      ['ebb-watcher', parseWatcherConfig],
      ['ebb-worker', parseWorkerConfig],
    ] as const) {
      const env = envOf(objects, deployment, secrets);
      expect(env['EBB_REDIS_URL'], 'no standalone URL left').toBeUndefined();
      const cfg = parse(env);
      expect(cfg.queue.redis, deployment).toMatchObject({
        mode: 'sentinel',
        masterName: 'mymaster',
        sentinels: [{ host: 'redis-sentinel.redis.svc', port: 26379 }],
        auth: { username: 'ebb', password: 'pw' },
        sentinelAuth: { password: 'spw' },
      });
    }
  });
});
