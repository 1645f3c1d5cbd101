#!/usr/bin/env node
import { runCommand } from './commands.ts';

const code = await runCommand(process.argv.slice(2));
process.exitCode = code;
