import { describe, expect, it } from 'vitest';
import { daemonOptionsFromEnv } from '../../../src/cli/processes.ts';
import { DAEMON_DEFAULTS } from '../../../src/daemon/options.ts';

describe('daemonOptionsFromEnv', () => {
  it('reads the node name and CRI socket the DaemonSet sets, and defaults the rest', () => {
    expect(daemonOptionsFromEnv({ NODE_NAME: 'node-1', CRI_SOCKET: '/run/containerd/containerd.sock' })).toEqual({
      ...DAEMON_DEFAULTS,
      nodeName: 'node-1',
      criEndpoint: '/run/containerd/containerd.sock',
    });
  });

  it('prefers the EBB_ names', () => {
    const o = daemonOptionsFromEnv({ NODE_NAME: 'a', EBB_NODE_NAME: 'b', CRI_SOCKET: '/x.sock', EBB_CRI_ENDPOINT: 'unix:///y.sock', EBB_HTTP_PORT: '9100', EBB_LOG_LEVEL: 'debug' });
    expect(o).toMatchObject({ nodeName: 'b', criEndpoint: 'unix:///y.sock', httpPort: 9100, logLevel: 'debug' });
  });

  it('lists every problem', () => {
    expect(() => daemonOptionsFromEnv({ EBB_HTTP_PORT: 'eighty', EBB_LOG_LEVEL: 'loud' })).toThrow(/EBB_NODE_NAME[\s\S]*EBB_HTTP_PORT[\s\S]*EBB_LOG_LEVEL/);
  });
});
