import { describe, expect, it } from 'vitest';
import { cniConfig, containerdConfig, containerdPaths, inNamespace } from './containerd.ts';
import { kubeletConfig, kubeletPaths } from './kubelet.ts';
import { REAL_POD_NETWORK, nodeNetwork } from './real-node.ts';

describe('a real node configuration', () => {
  const dir = '/tmp/sb/real-node-0';

  it('containerd: own root, state, runc root and socket; cgroupfs; the sandbox pause image; oom score restricted', () => {
    const paths = containerdPaths(dir);
    const toml = containerdConfig(paths, '127.0.0.1:5000/ebb/pause:1.0');
    for (const line of [
      `root = "${dir}/containerd/root"`,
      `state = "${dir}/containerd/state"`,
      `address = "${dir}/containerd.sock"`,
      'sandbox_image = "127.0.0.1:5000/ebb/pause:1.0"',
      'restrict_oom_score_adj = true',
      'SystemdCgroup = false',
      `Root = "${dir}/containerd/runc"`,
      `conf_dir = "${dir}/cni"`,
    ]) {
      expect(toml).toContain(line);
    }
  });

  it('CNI: a bridge with no gateway and no masquerade, addresses from the node /24 kept in the node dir', () => {
    const net = nodeNetwork(0);
    const conf = JSON.parse(cniConfig(net.network, net.bridge, net.subnet, `${dir}/ipam`)) as { plugins: Record<string, unknown>[] };
    expect(conf.plugins[0]).toMatchObject({
      type: 'bridge',
      bridge: 'ebbrn0',
      isGateway: false,
      ipMasq: false,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.213.0.0/24' }]], dataDir: `${dir}/ipam` },
    });
    expect(net.nodeIP).toBe('10.213.0.1');
  });

  it("CNI: routes to the other real nodes' pods via the bridge address, and no default route", () => {
    const net = nodeNetwork(1);
    const conf = JSON.parse(cniConfig(net.network, net.bridge, net.subnet, `${dir}/ipam`, [{ dst: REAL_POD_NETWORK, gw: net.nodeIP }])) as {
      plugins: { ipam: { routes?: { dst: string; gw: string }[] } }[];
    };
    expect(conf.plugins[0]?.ipam.routes).toEqual([{ dst: '10.213.0.0/16', gw: '10.213.1.1' }]);
    expect(conf.plugins[0]?.ipam.routes?.some((r) => r.dst === '0.0.0.0/0')).toBe(false);
  });

  it('runs containerd and the kubelet inside the node mount namespace (nsenter execs the binary itself)', () => {
    expect(inNamespace('/n/mntns', '/usr/bin/containerd', ['--config', 'c'])).toEqual([
      'nsenter',
      ['--mount=/n/mntns', '/usr/bin/containerd', '--config', 'c'],
    ]);
    expect(inNamespace(undefined, '/usr/bin/containerd', ['x'])).toEqual(['/usr/bin/containerd', ['x']]);
  });

  it('kubelet: cgroup v1 with cgroupfs under its own root, no negative oom score, API on the node IP with a CA-signed certificate and webhook auth', () => {
    const paths = kubeletPaths(dir);
    const config = kubeletConfig({
      paths,
      caCert: '/ca.crt',
      containerdSocket: `${dir}/containerd.sock`,
      cgroupRoot: '/ebb-real-node-0',
      address: '10.213.0.1',
      serving: { cert: '/s.crt', key: '/s.key' },
      port: 10250,
      healthzPort: 10248,
    });
    expect(config).toMatchObject({
      address: '10.213.0.1',
      tlsCertFile: '/s.crt',
      tlsPrivateKeyFile: '/s.key',
      readOnlyPort: 0,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: '/ebb-real-node-0',
      failCgroupV1: false,
      oomScoreAdj: 0,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: '/ca.crt' } },
      authorization: { mode: 'Webhook' },
      containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
      podLogsDir: `${dir}/pod-logs`,
      makeIPTablesUtilChains: false,
    });
  });
});
