import { describe, expect, it } from 'vitest';
import { changedImages } from '../src/image-changes.js';

const paths = (before: unknown, after: unknown) =>
  changedImages(before, after, 'spec').map((i) => `${i.path}=${i.image}`);

describe('changedImages', () => {
  it('nothing changed, whatever the order of named containers', () => {
    const before = {
      containers: [
        { name: 'a', image: 'a:1' },
        { name: 'b', image: 'b:1' },
      ],
    };
    const after = {
      containers: [
        { name: 'b', image: 'b:1' },
        { name: 'a', image: 'a:1' },
      ],
    };
    expect(paths(before, after)).toEqual([]);
  });

  it('an image change at the same name', () => {
    const before = { initContainers: [{ name: 'a', image: 'a:1' }] };
    const after = { initContainers: [{ name: 'a', image: 'a:2' }] };
    expect(paths(before, after)).toEqual(['spec.initContainers[0].image=a:2']);
  });

  it('an added entry, and an entry whose name moved to another list', () => {
    const before = { containers: [{ name: 'a', image: 'a:1' }] };
    const after = {
      containers: [{ name: 'a', image: 'a:1' }],
      ephemeralContainers: [{ name: 'a', image: 'a:1' }],
    };
    expect(paths(before, after)).toEqual(['spec.ephemeralContainers[0].image=a:1']);
  });

  it('entries without names pair by index', () => {
    const before = { containers: [{ image: 'a:1' }, { image: 'b:1' }] };
    expect(paths(before, { containers: [{ image: 'a:1' }, { image: 'b:1' }] })).toEqual([]);
    expect(paths(before, { containers: [{ image: 'b:1' }, { image: 'a:1' }] })).toEqual([
      'spec.containers[0].image=b:1',
      'spec.containers[1].image=a:1',
    ]);
  });

  it('a name used twice before pairs with nothing', () => {
    const before = {
      containers: [
        { name: 'a', image: 'x:1' },
        { name: 'a', image: 'y:1' },
      ],
    };
    const after = { containers: [{ name: 'a', image: 'y:1' }] };
    expect(paths(before, after)).toEqual(['spec.containers[0].image=y:1']);
  });

  it('image volumes pair by volume name', () => {
    const before = {
      volumes: [
        { name: 'v', image: { reference: 'd:1' } },
        { name: 'w', emptyDir: {} },
      ],
    };
    const after = {
      volumes: [
        { name: 'w', emptyDir: {} },
        { name: 'v', image: { reference: 'd:2' } },
      ],
    };
    expect(paths(before, after)).toEqual(['spec.volumes[1].image.reference=d:2']);
  });

  it('a missing spec has no images', () => {
    expect(paths(undefined, { containers: [{ name: 'a', image: 'a:1' }] })).toEqual([
      'spec.containers[0].image=a:1',
    ]);
    expect(paths({ containers: [{ name: 'a', image: 'a:1' }] }, null)).toEqual([]);
  });
});
