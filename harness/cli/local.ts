import { cliConfig } from '../../src/cli/config.ts';
import { createLogger, type Logger } from '../../src/common/log.ts';
import { startNodeDaemons, type NodeDaemons } from '../sandbox/daemons.ts';
import { startSandbox, type Sandbox } from '../sandbox/sandbox.ts';

export interface LocalClusterOptions {
  dir: string;
  nodes: number;
  /** Real nodes beside the simulated ones (0 or 1). */
  realNodes?: number | undefined;
  /** One `ebb daemon` per node, simulated or real (in this process). */
  daemons: boolean;
  log: Logger;
}

/** A sandbox and, unless turned off, its node daemons; stop() stops the daemons first, then the sandbox. */
export interface LocalCluster {
  sandbox: Sandbox;
  daemons: NodeDaemons | undefined;
  stop(): Promise<void>;
}

/** What `run --all` and `sandbox up` start: the sandbox, then one daemon per node (simulated or real). */
export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const sandbox = await startSandbox({ dir: opts.dir, nodes: opts.nodes, realNodes: opts.realNodes, log: opts.log });
  let daemons: NodeDaemons | undefined;
  try {
    if (opts.daemons) {
      const nodes = [...sandbox.sim.nodes.values(), ...(sandbox.real?.nodes ?? [])];
      daemons = await startNodeDaemons({ kubeconfig: sandbox.kubeconfig, nodes, log: opts.log.child({ process: 'daemon' }) });
      opts.log.info({ nodes: nodes.map((n) => n.name) }, 'node daemons started');
    }
  } catch (err) {
    await sandbox.stop();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    sandbox,
    daemons,
    stop: () =>
      (stopping ??= (async () => {
        await daemons?.stop();
        await sandbox.stop();
      })()),
  };
}

/** The `--daemons` / `--no-daemons` option shared by `run` and `sandbox` (on by default). */
export const DAEMONS_OPTION = { daemons: { type: 'boolean', default: true } } as const;

/**
 * The logger of `run --all` and `sandbox up`: readable lines (`HH:MM:SS level component msg key=value`) unless
 * EBB_LOG_FORMAT says `json`; EBB_LOG_LEVEL sets the level as for `ebb run`.
 */
export function devLogger(component: string, env: Record<string, string | undefined> = process.env): Logger {
  const cfg = cliConfig({ EBB_LOG_FORMAT: 'pretty', ...env });
  return createLogger(component, cfg.logLevel, cfg.logFormat);
}
