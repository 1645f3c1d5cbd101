/** EBB_CHECK_ALLOWED_HOSTS and EBB_CHECK_NETWORKS: parsing (through the worker's settings) and matching. */
import { describe, expect, it } from 'vitest';
import { parseWorkerConfig } from '../../../src/workers/config.ts';
import { hostAllowed, parseAllowEntry, type AllowEntry } from '../../../src/workers/egress/allowlist.ts';

const base = { EBB_REDIS_URL: 'redis://127.0.0.1:6379' };

describe('the allowed check hosts', () => {
  it('are none by default, and the networks private', () => {
    const cfg = parseWorkerConfig(base);
    expect(cfg.egress).toEqual({ allowedHosts: [], networks: 'private' });
  });

  it('parses entries NAMESPACE/HOST[:PORT]', () => {
    const cfg = parseWorkerConfig({
      ...base,
      EBB_CHECK_ALLOWED_HOSTS: '*/Prometheus.Monitoring.svc:9090, team-a/*.team-a.svc ,team-b/*,*/[fd00::5]:80,*/10.0.0.7',
    });
    expect(cfg.egress.allowedHosts).toEqual([
      { namespace: '*', host: 'prometheus.monitoring.svc', port: 9090 },
      { namespace: 'team-a', host: '*.team-a.svc', port: undefined },
      { namespace: 'team-b', host: '*', port: undefined },
      { namespace: '*', host: '[fd00::5]', port: 80 },
      { namespace: '*', host: '10.0.0.7', port: undefined },
    ]);
  });

  it.each(['prometheus.monitoring.svc', 'team-a/http://x', 'a/b/c', '*/*.', '*/x:99999', 'Team_A/x', '*/x:'])('refuses the entry %s', (item) => {
    expect(() => parseWorkerConfig({ ...base, EBB_CHECK_ALLOWED_HOSTS: item })).toThrow(/EBB_CHECK_ALLOWED_HOSTS/);
  });

  it('refuses a networks value that is not a scope', () => {
    expect(() => parseWorkerConfig({ ...base, EBB_CHECK_NETWORKS: 'all' })).toThrow(/EBB_CHECK_NETWORKS: must be one of public, private, local/);
    expect(parseWorkerConfig({ ...base, EBB_CHECK_NETWORKS: 'local' }).egress.networks).toBe('local');
  });

  it('matches by namespace, host (exact, subdomain wildcard, any) and port (explicit or the scheme default)', () => {
    const entries = ['*/prometheus.monitoring.svc:9090', 'team-a/*.team-a.svc', 'team-b/*', '*/[fd00::5]:80'].map((e) => parseAllowEntry(e) as AllowEntry);
    const ok = (ns: string, url: string) => hostAllowed(entries, ns, new URL(url));
    expect(ok('team-c', 'http://prometheus.monitoring.svc:9090/api')).toBe(true);
    expect(ok('team-c', 'http://PROMETHEUS.monitoring.svc.:9090/')).toBe(true);
    expect(ok('team-c', 'http://prometheus.monitoring.svc/')).toBe(false);
    expect(ok('team-c', 'http://prometheus.monitoring.svc.evil.example:9090/')).toBe(false);
    expect(ok('team-a', 'https://metrics.team-a.svc/x')).toBe(true);
    expect(ok('team-a', 'https://a.b.team-a.svc/x')).toBe(true);
    expect(ok('team-a', 'https://team-a.svc/x')).toBe(false);
    expect(ok('team-a', 'https://evilteam-a.svc/x')).toBe(false);
    expect(ok('team-c', 'https://metrics.team-a.svc/x')).toBe(false);
    expect(ok('team-b', 'http://anything.example:1234/')).toBe(true);
    expect(ok('team-c', 'http://[fd00::5]/')).toBe(true);
    expect(ok('team-c', 'https://[fd00::5]/')).toBe(false);
  });
});
