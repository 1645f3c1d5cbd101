import { describe, expect, it } from 'vitest';
import { cniConfig, containerdConfig, containerdPaths } from './containerd.ts';
import { kubeletConfig, kubeletPaths } from './kubelet.ts';
import { nodeNetwork } from './real-nodes.ts';

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

  it('kubelet: cgroup v1 with cgroupfs under its own root, no negative oom score, API on loopback with webhook auth', () => {
    const paths = kubeletPaths(dir);
    const config = kubeletConfig({
      paths,
      caCert: '/ca.crt',
      containerdSocket: `${dir}/containerd.sock`,
      cgroupRoot: '/ebb-real-node-0',
      port: 10250,
      healthzPort: 10248,
    });
    expect(config).toMatchObject({
      address: '127.0.0.1',
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
