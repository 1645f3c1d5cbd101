import { describe, expect, it } from 'vitest';
import { IMAGE_REFERENCE_PATTERN, normalizeImage, parseImageReference } from './image-ref.ts';

describe('parseImageReference', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['team/app:v1', 'docker.io/team/app:v1'],
    ['127.0.0.1:5000/app:v2', '127.0.0.1:5000/app:v2'],
    ['localhost/app', 'localhost/app:latest'],
    ['registry.example.com/a/b/c:1.0-rc_1', 'registry.example.com/a/b/c:1.0-rc_1'],
    [`app@sha256:${'a'.repeat(64)}`, `docker.io/library/app@sha256:${'a'.repeat(64)}`],
    [`app:v1@sha256:${'b'.repeat(64)}`, `docker.io/library/app:v1@sha256:${'b'.repeat(64)}`],
    ['[::1]:5000/app:x', '[::1]:5000/app:x'],
    [`app@sha384:${'c'.repeat(96)}`, `docker.io/library/app@sha384:${'c'.repeat(96)}`],
    [`app@sha512:${'d'.repeat(128)}`, `docker.io/library/app@sha512:${'d'.repeat(128)}`],
  ])('normalizes %s to %s', (input, expected) => {
    expect(normalizeImage(input)).toBe(expected);
  });

  it.each([
    [''],
    ['app/UPPER'],
    ['app:'],
    ['app:-bad'],
    ['app@sha256:short'],
    ['-app'],
    ['app//x'],
    ['a b'],
    [`app:${'t'.repeat(129)}`],
    ['http://registry/app'],
  ])('rejects %j', (input) => {
    const result = parseImageReference(input);
    expect(result.ok).toBe(false);
    expect(new RegExp(IMAGE_REFERENCE_PATTERN).test(input)).toBe(false);
  });

  // The grammar (and so the CRD pattern) lets these through; a container runtime refuses them.
  it.each([
    [`app@sha256:${'a'.repeat(40)}`, 'a sha256 digest has 64 hex digits, not 40'],
    [`app@sha256:${'a'.repeat(65)}`, 'a sha256 digest has 64 hex digits, not 65'],
    [`app@sha512:${'a'.repeat(64)}`, 'a sha512 digest has 128 hex digits, not 64'],
    [`app@sha256:${'A'.repeat(64)}`, 'digest hex digits must be lower case'],
    [`app@sha1:${'a'.repeat(40)}`, 'digest algorithm "sha1" is not supported (sha256, sha384 or sha512)'],
    [`app@constructor:${'a'.repeat(64)}`, 'digest algorithm "constructor" is not supported (sha256, sha384 or sha512)'],
  ])('rejects %s, which the grammar allows, because runtimes do', (input, reason) => {
    expect(new RegExp(IMAGE_REFERENCE_PATTERN).test(input)).toBe(true);
    expect(parseImageReference(input)).toEqual({ ok: false, reason });
  });
});
