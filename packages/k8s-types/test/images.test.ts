import { describe, expect, it } from 'vitest';
import {
  type ImageAt,
  imagesOf,
  type KubeObject,
  ObjectShapeError,
  podSpecOf,
  WORKLOADS,
} from '../src/index.js';
import { fixture } from './fixtures.js';

const paths = (images: ImageAt[]) => images.map((i) => `${i.path}=${i.image}`);

describe('imagesOf', () => {
  it('lists every image field with its JSON path, in field order', () => {
    const spec = {
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'sidecar', image: 'proxy:2' },
      ],
      initContainers: [
        { name: 'init', image: 'init:1' },
        { name: 'init2', image: 'init:2' },
      ],
      ephemeralContainers: [{ name: 'debug', image: 'busybox' }],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'weights', image: { reference: 'models/llm:v3' } },
      ],
    };
    const images = imagesOf(spec, 'spec.template.spec');
    expect(paths(images)).toEqual([
      'spec.template.spec.containers[0].image=app:1',
      'spec.template.spec.containers[1].image=proxy:2',
      'spec.template.spec.initContainers[0].image=init:1',
      'spec.template.spec.initContainers[1].image=init:2',
      'spec.template.spec.ephemeralContainers[0].image=busybox',
      'spec.template.spec.volumes[1].image.reference=models/llm:v3',
    ]);
    expect(images[5]).toEqual({
      path: 'spec.template.spec.volumes[1].image.reference',
      image: 'models/llm:v3',
      field: 'volumes',
      index: 1,
      name: 'weights',
    });
    expect(images[1]).toMatchObject({ field: 'containers', index: 1, name: 'sidecar' });
  });

  it('defaults the base path to a Pod spec', () => {
    expect(paths(imagesOf({ containers: [{ image: 'a' }] }))).toEqual(['spec.containers[0].image=a']);
  });

  it('reads the fixtures, volumes included', () => {
    const cron = (fixture('cronjob-create.json') as { request: { object: KubeObject } }).request.object;
    const info = WORKLOADS.CronJob;
    expect(paths(imagesOf(podSpecOf(info, cron), 'spec.jobTemplate.spec.template.spec'))).toEqual([
      'spec.jobTemplate.spec.template.spec.containers[0].image=ghcr.io/acme/report:2026.11',
      'spec.jobTemplate.spec.template.spec.volumes[0].image.reference=ghcr.io/acme/model-weights:v3',
    ]);
    const pod = (fixture('pod-create.json') as { request: { object: KubeObject } }).request.object;
    expect(imagesOf(podSpecOf(WORKLOADS.Pod, pod)).map((i) => i.path)).toEqual([
      'spec.containers[0].image',
      'spec.initContainers[0].image',
    ]);
  });

  it('treats missing, null and empty lists alike, and skips entries without an image', () => {
    expect(imagesOf(undefined)).toEqual([]);
    expect(imagesOf(null)).toEqual([]);
    expect(imagesOf({})).toEqual([]);
    expect(imagesOf({ containers: null, initContainers: [] })).toEqual([]);
    expect(
      imagesOf({ containers: [{ name: 'x' }, { name: 'y', image: null }], volumes: [{ image: null }] }),
    ).toEqual([]);
  });

  it.each([
    ['x', 'spec: must be an object, got string'],
    [{ containers: {} }, 'spec.containers: must be a list, got object'],
    [{ containers: [7] }, 'spec.containers[0]: must be an object, got number'],
    [{ initContainers: [{ image: 3 }] }, 'spec.initContainers[0].image: must be a string, got number'],
    [{ volumes: [{ image: 'x' }] }, 'spec.volumes[0].image: must be an object, got string'],
    [
      { volumes: [{ image: { reference: {} } }] },
      'spec.volumes[0].image.reference: must be a string, got object',
    ],
  ])('rejects malformed spec %#', (spec, message) => {
    expect(() => imagesOf(spec)).toThrow(ObjectShapeError);
    expect(() => imagesOf(spec)).toThrow(message);
  });
});
