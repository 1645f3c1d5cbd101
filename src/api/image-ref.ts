/**
 * Container image references, per the OCI distribution reference grammar:
 *   reference := name [":" tag] ["@" digest];  name := [domain "/"] path-component ["/" path-component]*
 * The same expression is the CRD's `pattern` for ImageList entries and for the images of an App's pod
 * template (RE2- and ECMAScript-compatible), so every image an App runs can be listed in an ImageList.
 */
import { Type, type TString } from '@sinclair/typebox';
const pathComponent = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domain = `${host}(?::[0-9]+)?`;
const name = `(?:${domain}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';

export const IMAGE_REFERENCE_PATTERN = `^${name}(?::${tag})?(?:@${digest})?$`;
export const IMAGE_REFERENCE_MAX_LENGTH = 512;
const NAME_MAX_LENGTH = 255;
/**
 * The digest algorithms container runtimes accept (those go-digest registers) and their hex lengths. The
 * grammar allows any algorithm and 32 or more hex digits; a runtime refuses anything else.
 */
const DIGEST_HEX_LENGTHS: ReadonlyMap<string, number> = new Map([
  ['sha256', 64],
  ['sha384', 96],
  ['sha512', 128],
]);

/** The schema of an image reference field: the one grammar for App templates and ImageList entries. */
export function imageReferenceSchema(description: string): TString {
  return Type.String({ description, minLength: 1, maxLength: IMAGE_REFERENCE_MAX_LENGTH, pattern: IMAGE_REFERENCE_PATTERN });
}

const referenceRe = new RegExp(IMAGE_REFERENCE_PATTERN);
const splitRe = new RegExp(`^(${name})(?::(${tag}))?(?:@(${digest}))?$`);

export interface ImageReference {
  /** Registry host, e.g. `docker.io` or `127.0.0.1:5000`. */
  domain: string;
  /** Repository path inside the registry, e.g. `library/nginx`. */
  path: string;
  tag: string | undefined;
  digest: string | undefined;
}

export type ParseResult = { ok: true; ref: ImageReference } | { ok: false; reason: string };

function isDomain(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase();
}

/** Parses and normalizes a reference the way container runtimes do (`nginx` → `docker.io/library/nginx:latest`). */
export function parseImageReference(input: string): ParseResult {
  if (input.length === 0) return { ok: false, reason: 'image reference is empty' };
  if (input.length > IMAGE_REFERENCE_MAX_LENGTH) return { ok: false, reason: `image reference is longer than ${IMAGE_REFERENCE_MAX_LENGTH} characters` };
  const m = splitRe.exec(input);
  if (!m || !referenceRe.test(input)) return { ok: false, reason: `"${input}" is not a valid image reference (OCI distribution grammar)` };
  const fullName = m[1] ?? '';
  const digestPart = m[3];
  const problem = partsProblem(fullName, digestPart);
  if (problem) return { ok: false, reason: problem };
  const slash = fullName.indexOf('/');
  const first = slash < 0 ? '' : fullName.slice(0, slash);
  let dom = 'docker.io';
  let path = fullName;
  if (slash >= 0 && isDomain(first)) {
    dom = first;
    path = fullName.slice(slash + 1);
  }
  if (dom === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const tagPart = m[2] ?? (digestPart ? undefined : 'latest');
  return { ok: true, ref: { domain: dom, path, tag: tagPart, digest: digestPart } };
}

/** What runtimes refuse beyond the grammar: a long repository name, a digest they do not support. */
function partsProblem(fullName: string, digest: string | undefined): string | undefined {
  if (fullName.length > NAME_MAX_LENGTH) return `repository name is longer than ${NAME_MAX_LENGTH} characters`;
  return digest === undefined ? undefined : digestProblem(digest);
}

/** Why a runtime would refuse `digest` (`algorithm:hex`), or undefined when it is well-formed. */
function digestProblem(digest: string): string | undefined {
  const colon = digest.indexOf(':');
  const algorithm = digest.slice(0, colon);
  const hex = digest.slice(colon + 1);
  const length = DIGEST_HEX_LENGTHS.get(algorithm);
  if (length === undefined) return `digest algorithm "${algorithm}" is not supported (sha256, sha384 or sha512)`;
  if (hex.length !== length) return `a ${algorithm} digest has ${length} hex digits, not ${hex.length}`;
  if (!/^[0-9a-f]+$/.test(hex)) return 'digest hex digits must be lower case';
  return undefined;
}

export function repository(ref: ImageReference): string {
  return `${ref.domain}/${ref.path}`;
}

/** The canonical string form: `domain/path[:tag][@digest]`. */
export function formatImageReference(ref: ImageReference): string {
  return `${repository(ref)}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Normalizes a reference, or returns undefined when it is invalid. */
export function normalizeImage(input: string): string | undefined {
  const parsed = parseImageReference(input);
  return parsed.ok ? formatImageReference(parsed.ref) : undefined;
}
