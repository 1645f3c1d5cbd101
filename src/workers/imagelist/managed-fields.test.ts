import { describe, expect, it } from 'vitest';
import { imagesOwnedBy } from './managed-fields.ts';

const fields = (...images: string[]) => ({
  'f:spec': { 'f:images': Object.fromEntries(images.map((i) => [`k:${JSON.stringify({ image: i })}`, { '.': {}, 'f:image': {}, 'f:pullRequestedAt': {} }])) },
});

describe('imagesOwnedBy', () => {
  it('lists the images of the manager’s applied entries only', () => {
    const owned = imagesOwnedBy(
      [
        { manager: 'ebb-repull', operation: 'Apply', fieldsV1: fields('a:1', 'b:2') },
        { manager: 'kubectl', operation: 'Apply', fieldsV1: fields('c:3') },
        { manager: 'ebb-repull', operation: 'Update', fieldsV1: fields('d:4') },
        { manager: 'ebb-repull', operation: 'Apply', subresource: 'status', fieldsV1: fields('e:5') },
      ],
      'ebb-repull',
    );
    expect([...owned].sort()).toEqual(['a:1', 'b:2']);
  });

  it.each([
    undefined,
    [],
    [{ manager: 'ebb-repull', operation: 'Apply' }],
    [{ manager: 'ebb-repull', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:images': { 'k:{bad': {}, 'f:x': {} } } } }],
  ])('finds nothing in %j', (mf) => {
    expect(imagesOwnedBy(mf, 'ebb-repull').size).toBe(0);
  });
});
