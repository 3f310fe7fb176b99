import { readFileSync } from 'node:fs';

/** Reads a fixture file from `test/fixtures` as text. */
export function fixtureText(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** Reads and JSON-parses a fixture file from `test/fixtures`. */
export function fixture(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

/** A review body whose `request.object` nests `levels` arrays deep: about 2 bytes a level. */
export function deeplyNestedReviewText(levels: number): string {
  return (
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep-1",' +
    '"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},' +
    `"operation":"CREATE","userInfo":{},"object":{"spec":${'['.repeat(levels)}${']'.repeat(levels)}}}}`
  );
}
