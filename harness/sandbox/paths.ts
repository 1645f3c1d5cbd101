import { resolve } from 'node:path';

/** The project root (this file lives in harness/sandbox). */
export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..');
export const DEFAULT_BIN_DIR = resolve(PROJECT_ROOT, 'bin');
export const CRD_DIR = resolve(PROJECT_ROOT, 'deploy', 'crds');
