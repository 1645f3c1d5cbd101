import { describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../../src/daemon/daemon.ts';
import { parseDaemonConfig } from '../../src/daemon/config.ts';
import { daemonOptionsOf } from '../../src/daemon/options.ts';
import { daemonBanner, nodeDaemonOptions, type NodeDaemons } from './daemons.ts';

const node = { name: 'sim-node-1', criSocket: '/sandbox/nodes/sim-node-1/cri.sock' };

function running(ports: Record<string, number>): NodeDaemons {
  const daemon = {} as RunningDaemon;
  return { daemons: new Map(Object.entries(ports).map(([n, httpPort]) => [n, { node: n, httpPort, daemon }])), stop: () => Promise.resolve() };
}

describe('node daemon options', () => {
  it('serve the node through its CRI socket, on loopback with a free port, no disk guard: what `ebb daemon` runs with those settings', () => {
    const o = nodeDaemonOptions(node);
    expect(o).toMatchObject({ nodeName: 'sim-node-1', criEndpoint: 'unix:///sandbox/nodes/sim-node-1/cri.sock', httpAddress: '127.0.0.1', httpPort: 0 });
    // Everything else is what the product's settings table gives a daemon whose environment sets only these.
    const env = {
      EBB_NODE_NAME: 'sim-node-1',
      EBB_CRI_ENDPOINT: 'unix:///sandbox/nodes/sim-node-1/cri.sock',
      EBB_HTTP_ADDRESS: '127.0.0.1',
      EBB_HTTP_PORT: '0',
      EBB_IMAGE_FS_HIGH_PERCENT: '100',
    };
    expect(o).toEqual(daemonOptionsOf(parseDaemonConfig(env)));
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('take overrides, but never another node or socket', () => {
    const o = nodeDaemonOptions(node, { statusFlushMs: 100, httpPort: 9100, ...({ nodeName: 'other', criEndpoint: 'unix:///x.sock' } as object) });
    expect(o).toMatchObject({ nodeName: 'sim-node-1', criEndpoint: 'unix:///sandbox/nodes/sim-node-1/cri.sock', statusFlushMs: 100, httpPort: 9100 });
  });
});

describe('daemon banner', () => {
  it('names each node with its metrics address', () => {
    expect(daemonBanner(running({ 'sim-node-0': 4100, 'sim-node-1': 4101 }))).toEqual([
      "  node daemons: 2 (ebb daemon per simulated node: ImageList <node> is pulled into that node's images)",
      '    sim-node-0  http://127.0.0.1:4100/metrics',
      '    sim-node-1  http://127.0.0.1:4101/metrics',
    ]);
  });

  it('says when daemons are off or there is no node', () => {
    expect(daemonBanner(undefined)).toEqual(['  node daemons: off (--no-daemons)']);
    expect(daemonBanner(running({}))).toEqual(['  node daemons: none (no simulated nodes)']);
  });
});
