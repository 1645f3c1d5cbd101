#!/usr/bin/env node
/**
 * The development commands: a local sandbox (control plane, Redis, simulated nodes, one `ebb daemon` per node)
 * and `ebb run --all` against one. Never part of the product image.
 */
import { dispatch, type CommandSpec } from '../../src/cli/commands.ts';

// Each command loads the sandbox only when it runs.
const COMMANDS: Record<string, CommandSpec> = {
  sandbox: {
    run: async (args) => (await import('./sandbox.ts')).sandboxCommand(args),
    help: 'sandbox up|down [--dir .sandbox] [--nodes 3] [--real-nodes 0..4] [--no-daemons]   control plane, simulated (and real) nodes, a node daemon each',
  },
  run: {
    run: async (args) => (await import('./run.ts')).runCommand(args),
    help: 'run --all [--dir .sandbox] [--nodes 3] [--real-nodes 0..4] [--sample] [--no-daemons]   a sandbox, then watcher and worker in one process',
  },
};

process.exitCode = await dispatch('harness', COMMANDS, process.argv.slice(2));
