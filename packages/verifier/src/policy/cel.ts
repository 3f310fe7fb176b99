// CEL policies (`policy.type: cel`), parsed and planned once when a policy is compiled and
// evaluated per attestation. A policy passes only when the expression evaluates to `true`; false,
// any other value and evaluation errors (a missing field, a type error) fail it.
import { type CelInput, type CelResult, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

export type CelOutcome =
  | { readonly passed: true }
  | { readonly passed: false; readonly reason: string; readonly cause?: unknown };

/** A compiled CEL expression. */
export interface CelProgram {
  readonly source: string;
  evaluate(bindings: Readonly<Record<string, unknown>>): CelOutcome;
}

const ENV = celEnv({ funcs: strings });
const MAX_SOURCE = 64 * 1024;

/** Parses and plans `source`. Throws the parser's error (a syntax error, with its position) as is. */
export function compileCel(source: string): CelProgram {
  if (source.trim() === '') throw new Error('the CEL expression is empty');
  if (source.length > MAX_SOURCE)
    throw new Error(`the CEL expression is longer than ${MAX_SOURCE} characters`);
  const run = plan(ENV, parse(source));
  return Object.freeze({
    source,
    evaluate(bindings: Readonly<Record<string, unknown>>): CelOutcome {
      // A planned expression returns errors (unsupported inputs included) rather than throwing.
      const result: CelResult = run(bindings as Record<string, CelInput>);
      // The error's message is the reason; it is not repeated as a cause.
      if (isCelError(result)) return { passed: false, reason: `CEL evaluation failed: ${result.message}` };
      if (result === true) return { passed: true };
      return {
        passed: false,
        reason:
          result === false
            ? 'CEL policy returned false'
            : `CEL policy returned ${describe(result)}, not a bool`,
      };
    },
  });
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 50 ? `${value.slice(0, 50)}...` : value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return value === null ? 'null' : typeof value;
}
