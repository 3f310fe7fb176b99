// Kubernetes label selectors (`matchLabels` AND `matchExpressions`), as the API server and
// policy-controller evaluate them. An empty selector matches every object.
import type { LabelSelector, LabelSelectorRequirement } from '@signet/k8s-types';
import { InvalidPolicyError, quote } from './errors.js';

export type Labels = Readonly<Record<string, string>>;

/** A compiled selector: true when the labels satisfy every requirement. */
export type LabelMatcher = (labels: Labels) => boolean;

/**
 * Compiles a selector. Throws {@link InvalidPolicyError} with code `INVALID_SELECTOR` (path
 * relative to the selector) where Kubernetes would reject it: `In`/`NotIn` without values,
 * `Exists`/`DoesNotExist` with values.
 */
export function compileSelector(selector: LabelSelector): LabelMatcher {
  const requirements: ((labels: Labels) => boolean)[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    requirements.push((labels) => labelOf(labels, key) === value);
  }
  (selector.matchExpressions ?? []).forEach((requirement, index) => {
    requirements.push(compileRequirement(requirement, `matchExpressions[${index}]`));
  });
  return (labels) => requirements.every((requirement) => requirement(labels));
}

function compileRequirement(
  requirement: LabelSelectorRequirement,
  path: string,
): (labels: Labels) => boolean {
  const { key, operator } = requirement;
  const values = new Set(requirement.values ?? []);
  const needsValues = operator === 'In' || operator === 'NotIn';
  if (needsValues !== values.size > 0) {
    const problem = needsValues
      ? `operator ${operator} needs at least one value`
      : `operator ${operator} takes no values`;
    throw new InvalidPolicyError('INVALID_SELECTOR', undefined, `${path}.values`, problem);
  }
  switch (operator) {
    case 'In':
      return (labels) => hasValueIn(labels, key, values);
    case 'NotIn':
      return (labels) => !hasValueIn(labels, key, values);
    case 'Exists':
      return (labels) => labelOf(labels, key) !== undefined;
    case 'DoesNotExist':
      return (labels) => labelOf(labels, key) === undefined;
    default:
      // The type allows only the four operators; a policy built without the parser may not.
      throw new InvalidPolicyError(
        'INVALID_SELECTOR',
        undefined,
        `${path}.operator`,
        `unknown operator ${quote(operator)}`,
      );
  }
}

function hasValueIn(labels: Labels, key: string, values: ReadonlySet<string>): boolean {
  const value = labelOf(labels, key);
  return value !== undefined && values.has(value);
}

function labelOf(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}
