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
});
