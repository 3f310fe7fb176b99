// Which images of a Pod an UPDATE changes. Only the containers whose image changes restart, so
// only those images need verifying. Entries are paired by name within each list (containers,
// initContainers, ephemeralContainers, volumes) and by index where an entry has no name.
import { type ImageAt, imagesOf } from '@signet/k8s-types';

/**
 * The images of `after` that `before` does not have at the same place: a new entry, or an
 * image change at the same name. A name used twice in `before` pairs with nothing, so every
 * entry of that name counts as changed (the API server rejects such pods anyway).
 */
export function changedImages(before: unknown, after: unknown, basePath: string): ImageAt[] {
  const previous = new Map<string, string | null>();
  for (const image of imagesOf(before, basePath)) {
    const key = pairingKey(image);
    previous.set(key, previous.has(key) ? null : image.image);
  }
  return imagesOf(after, basePath).filter((image) => previous.get(pairingKey(image)) !== image.image);
}

function pairingKey(image: ImageAt): string {
  return image.name === undefined ? `${image.field}#${image.index}` : `${image.field}/${image.name}`;
}
