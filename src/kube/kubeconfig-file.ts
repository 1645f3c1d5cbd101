import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { isRecord } from '../common/guards.ts';
import { errorFirstLine } from '../common/errors.ts';

/**
 * Reading kubeconfig files: YAML → named entries, several files merged as kubectl does (the first file that
 * defines a name wins, the first `current-context` wins), each entry remembering the file it came from so
 * relative paths resolve against that file's directory and messages can name it.
 */

export type KubeConfigErrorCode = 'NotFound' | 'Unparsable' | 'NoContext' | 'MissingContext' | 'MissingCluster' | 'MissingUser' | 'UnreadableFile' | 'Invalid';

/** A kubeconfig that cannot be used. The message names the file (and context, cluster or user) at fault. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly code: KubeConfigErrorCode;
  constructor(code: KubeConfigErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** One named entry (cluster, user or context) and the file that defined it. */
export interface Entry {
  readonly name: string;
  readonly file: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface MergedKubeConfig {
  /** The files that were read, in order. */
  readonly files: readonly string[];
  readonly currentContext: string | undefined;
  readonly clusters: ReadonlyMap<string, Entry>;
  readonly users: ReadonlyMap<string, Entry>;
  readonly contexts: ReadonlyMap<string, Entry>;
}

const SECTIONS = [
  ['clusters', 'cluster'],
  ['users', 'user'],
  ['contexts', 'context'],
] as const;

/** Reads a file named by a kubeconfig; `what` says which field asked for it (for the message). */
export function readReferencedFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new KubeConfigError('UnreadableFile', `cannot read ${what} (${path}): ${errorFirstLine(err)}`);
  }
}

/** A path from a kubeconfig, resolved against the directory of the file that holds it. */
export function resolvePath(entry: Entry, path: string): string {
  return isAbsolute(path) ? path : join(dirname(entry.file), path);
}

function parseFile(file: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeConfigError('Unparsable', `${file}: not valid YAML: ${errorFirstLine(err)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw new KubeConfigError('Unparsable', `${file}: not a kubeconfig (expected a mapping with clusters, users and contexts)`);
  return doc;
}

function entriesOf(doc: Record<string, unknown>, file: string, section: string, inner: string): Entry[] {
  const list = doc[section];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new KubeConfigError('Unparsable', `${file}: ${section} must be a list`);
  return list.map((item: unknown, i) => {
    if (!isRecord(item) || typeof item['name'] !== 'string' || item['name'] === '') {
      throw new KubeConfigError('Unparsable', `${file}: ${section}[${i}] has no name`);
    }
    const fields = item[inner] ?? {};
    if (!isRecord(fields)) throw new KubeConfigError('Unparsable', `${file}: ${section}[${i}] (${item['name']}).${inner} must be a mapping`);
    return { name: item['name'], file, fields };
  });
}

/**
 * Reads and merges kubeconfig files. Files that do not exist are skipped (as kubectl does with a KUBECONFIG
 * list), but at least one must exist.
 */
export function readKubeConfigFiles(paths: readonly string[]): MergedKubeConfig {
  const files: string[] = [];
  const maps = { clusters: new Map<string, Entry>(), users: new Map<string, Entry>(), contexts: new Map<string, Entry>() };
  let currentContext: string | undefined;
  for (const file of paths) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new KubeConfigError('UnreadableFile', `cannot read kubeconfig ${file}: ${errorFirstLine(err)}`);
    }
    files.push(file);
    const doc = parseFile(file, text);
    for (const [section, inner] of SECTIONS) {
      for (const e of entriesOf(doc, file, section, inner)) if (!maps[section].has(e.name)) maps[section].set(e.name, e);
    }
    const cc = doc['current-context'];
    if (currentContext === undefined && typeof cc === 'string' && cc !== '') currentContext = cc;
  }
  if (files.length === 0) {
    throw new KubeConfigError(
      'NotFound',
      paths.length === 1 ? `kubeconfig ${paths[0]} does not exist` : `none of the kubeconfig files exists: ${paths.join(', ')}`,
    );
  }
  return { files, currentContext, ...maps };
}

/** Typed field access; a wrong type is an error naming the entry and its file. */
export function stringField(entry: Entry, kind: string, key: string): string | undefined {
  const v = entry.fields[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new KubeConfigError('Invalid', `${kind} "${entry.name}" in ${entry.file}: ${key} must be a string`);
  return v;
}

export function boolField(entry: Entry, kind: string, key: string): boolean {
  const v = entry.fields[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new KubeConfigError('Invalid', `${kind} "${entry.name}" in ${entry.file}: ${key} must be true or false`);
  return v;
}
