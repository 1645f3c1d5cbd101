#!/usr/bin/env node
// The kubectl plugin: on PATH as `kubectl-ebb`, kubectl runs it for `kubectl ebb ...`. The same commands as `ebb`.
import { runCommand } from './commands.ts';

const code = await runCommand(process.argv.slice(2), 'kubectl ebb');
process.exitCode = code;
