import { describe, expect, it } from 'vitest';
import { pinToPulledDigests, pulledDigestOf, repositoryOf } from '../../src/audit/pulled-images.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

describe('the digest a runtime pulled', () => {
  it.each([
    [`docker-pullable://reg.example/app@${D1}`, D1],
    [`reg.example:5000/team/app@${D1}`, D1],
    // An image (config) id is not a manifest digest: nothing verifiable.
    [D1, undefined],
    ['', undefined],
    [42, undefined],
  ])('%j -> %j', (imageID, digest) => {
    expect(pulledDigestOf(imageID)).toBe(digest);
  });

  it.each([
    ['reg.example:5000/team/app:v1', 'reg.example:5000/team/app'],
    [`reg.example:5000/app:v1@${D1}`, 'reg.example:5000/app'],
    ['reg.example:5000/app', 'reg.example:5000/app'],
    ['nginx', 'nginx'],
  ])('repository of %s', (image, repository) => {
    expect(repositoryOf(image)).toBe(repository);
  });

  it('pins containers, init and ephemeral containers by name, leaving unknown ones alone', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        initContainers: [{ name: 'init', image: 'reg/init:v1' }],
        containers: [
          { name: 'a', image: 'reg/a:v1' },
          { name: 'b', image: 'reg/b:v1' },
          { name: 'c', image: `reg/c@${D2}` },
        ],
        ephemeralContainers: [{ name: 'debug', image: 'reg/debug:v1' }],
      },
      status: {
        initContainerStatuses: [{ name: 'init', imageID: `reg/init@${D1}` }],
        containerStatuses: [
          { name: 'b', imageID: `docker-pullable://mirror/b@${D2}` },
          { name: 'a', imageID: D1 },
          { name: 'c', imageID: `reg/c@${D2}` },
        ],
        ephemeralContainerStatuses: [{ name: 'debug', imageID: `reg/debug@${D1}` }],
      },
    };
    const { object, specImages } = pinToPulledDigests(pod);
    const spec = object.spec as typeof pod.spec;
    expect(spec.initContainers[0]?.image).toBe(`reg/init@${D1}`);
    expect(spec.containers.map((c) => c.image)).toEqual(['reg/a:v1', `reg/b@${D2}`, `reg/c@${D2}`]);
    expect(spec.ephemeralContainers[0]?.image).toBe(`reg/debug@${D1}`);
    expect(specImages).toEqual({
      'spec.initContainers[0].image': 'reg/init:v1',
      'spec.containers[1].image': 'reg/b:v1',
      'spec.ephemeralContainers[0].image': 'reg/debug:v1',
    });
    expect(pod.spec.containers[1]?.image).toBe('reg/b:v1');
  });

  it('leaves a Pod without status as it is', () => {
    const pod = { kind: 'Pod', spec: { containers: [{ name: 'a', image: 'x' }] } };
    expect(pinToPulledDigests(pod)).toEqual({ object: pod, specImages: {} });
  });
});
