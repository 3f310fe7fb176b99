import { ObjectShapeError } from './errors.js';
import { describe, isObject, join } from './fields.js';

/** The pod spec lists that hold image references. */
export type ImageField = 'containers' | 'initContainers' | 'ephemeralContainers' | 'volumes';

export const IMAGE_FIELDS: readonly ImageField[] = [
  'containers',
  'initContainers',
  'ephemeralContainers',
  'volumes',
];

/** One image reference inside a pod spec. */
export interface ImageAt {
  /** JSON field path, e.g. `spec.template.spec.initContainers[1].image`. */
  readonly path: string;
  /** The reference exactly as written in the object. */
  readonly image: string;
  readonly field: ImageField;
  readonly index: number;
  /** Container or volume name, when the object names it. */
  readonly name: string | undefined;
}

/**
 * Every image of a pod spec with its field path: `containers[].image`, `initContainers[].image`,
 * `ephemeralContainers[].image` and `volumes[].image.reference`. Entries without an image are
 * skipped; a list or image of the wrong type throws {@link ObjectShapeError} naming the field.
 */
export function imagesOf(podSpec: unknown, basePath = 'spec'): ImageAt[] {
  if (podSpec === undefined || podSpec === null) return [];
  if (!isObject(podSpec)) throw new ObjectShapeError(basePath, `must be an object, got ${describe(podSpec)}`);
  const out: ImageAt[] = [];
  for (const field of IMAGE_FIELDS) {
    const list = podSpec[field];
    if (list === undefined || list === null) continue;
    const listPath = join(basePath, field);
    if (!Array.isArray(list)) throw new ObjectShapeError(listPath, `must be a list, got ${describe(list)}`);
    for (let index = 0; index < list.length; index++) {
      const image = imageOfEntry(list[index], field, `${listPath}[${index}]`);
      if (image !== undefined) out.push({ ...image, field, index });
    }
  }
  return out;
}

function imageOfEntry(
  entry: unknown,
  field: ImageField,
  entryPath: string,
): { path: string; image: string; name: string | undefined } | undefined {
  if (!isObject(entry)) throw new ObjectShapeError(entryPath, `must be an object, got ${describe(entry)}`);
  const name = typeof entry.name === 'string' ? entry.name : undefined;
  let holder: Record<string, unknown> = entry;
  let path = entryPath;
  let key = 'image';
  if (field === 'volumes') {
    const source = entry.image;
    if (source === undefined || source === null) return undefined;
    path = join(entryPath, 'image');
    if (!isObject(source)) throw new ObjectShapeError(path, `must be an object, got ${describe(source)}`);
    holder = source;
    key = 'reference';
  }
  const image = holder[key];
  path = join(path, key);
  if (image === undefined || image === null) return undefined;
  if (typeof image !== 'string') throw new ObjectShapeError(path, `must be a string, got ${describe(image)}`);
  return { path, image, name };
}
