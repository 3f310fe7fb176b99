// CEL policies (`policy.type: cel`, a Signet extension): parsed and planned once, evaluated per
// attestation. A policy passes only when the expression evaluates to `true`; false, any other
// value and evaluation errors (a missing field, a type error) fail it.
//
// Every evaluation runs under a cost limit. An expression without comprehensions costs at most its
// own size times its inputs' (CEL has no loops or recursion); the comprehensions (all, exists,
// exists_one, map, filter) are what multiply, three nested all() over 200 elements being 8 million
// steps. So each comprehension's loop condition is wrapped in a call that counts the steps, and
// an evaluation past the limit stops and fails the policy, deterministically (the same input
// always costs the same), which makes it a policy failure rather than an infrastructure one.
//
// This module imports nothing of Signet's: the CEL worker (cel-worker.ts) runs it from source as
// from dist. It is also where the evaluation in a worker is decided; `cel-workers.ts` only ships
// messages.
import {
  type CelInput,
  type CelResult,
  CelScalar,
  celEnv,
  celFunc,
  isCelError,
  parse,
  plan,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

export type CelOutcome = { readonly passed: true } | { readonly passed: false; readonly reason: string };

/** A compiled CEL expression, evaluated on the calling thread. */
export interface CelProgram {
  readonly source: string;
  evaluate(bindings: Readonly<Record<string, unknown>>): CelOutcome;
}

export interface CelLimits {
  /** Comprehension steps one evaluation may take (`DEFAULT_CEL_COST_LIMIT` of cel-host.ts). */
  readonly costLimit: number;
}
export const MAX_CEL_SOURCE = 64 * 1024;
/** A name no expression can spell (the parser reads no `@`), like CEL's own `@not_strictly_false`. */
const STEP = '@signet_step';

type ParsedExpr = ReturnType<typeof parse>['expr'];

/** The sub-expressions of `expr` (and a message field's name, a string). */
function childrenOf(expr: ParsedExpr): (ParsedExpr | string | undefined)[] {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'callExpr':
      return [kind.value.target, ...kind.value.args];
    case 'selectExpr':
      return [kind.value.operand];
    case 'listExpr':
      return kind.value.elements;
    case 'structExpr':
      return kind.value.entries.flatMap((entry) => [entry.value, entry.keyKind.value]);
    case 'comprehensionExpr': {
      const fold = kind.value;
      return [fold.iterRange, fold.accuInit, fold.loopCondition, fold.loopStep, fold.result];
    }
    default:
      return [];
  }
}

/**
 * Wraps every comprehension's loop condition `c` in `@signet_step(c)`. The loop condition is
 * evaluated once per element (a bool: `@not_strictly_false(...)` or `true` for the standard
 * macros), so counting its calls counts the steps. Iterative: a deeply nested expression must not
 * overflow the stack here (the parser bounds the depth first).
 */
function meterComprehensions(root: ParsedExpr): void {
  const pending: ParsedExpr[] = [root];
  for (let expr = pending.pop(); expr !== undefined; expr = pending.pop()) {
    for (const child of childrenOf(expr)) if (typeof child === 'object') pending.push(child);
    if (expr.exprKind.case !== 'comprehensionExpr') continue;
    const fold = expr.exprKind.value;
    // A call node made by the parser itself, renamed: the planner then treats it as any call.
    const step = parse('s(c)').expr;
    const call = step.exprKind.value as Extract<ParsedExpr['exprKind'], { case: 'callExpr' }>['value'];
    call.function = STEP;
    // A comprehension always has its loop condition (the planner refuses one without).
    call.args = [fold.loopCondition as ParsedExpr];
    fold.loopCondition = step;
  }
}

/** Parses and plans `source`. Throws the parser's error (a syntax error, with its position) as is. */
export function compileCel(source: string, limits: CelLimits): CelProgram {
  if (source.trim() === '') throw new Error('the CEL expression is empty');
  if (source.length > MAX_CEL_SOURCE)
    throw new Error(`the CEL expression is longer than ${MAX_CEL_SOURCE} characters`);
  const limit = limits.costLimit;
  const budget = { used: 0 };
  // One environment per program: the step counter is this program's, with no state shared.
  const step = celFunc(STEP, [CelScalar.BOOL], CelScalar.BOOL, (condition) => {
    budget.used += 1;
    // Thrown, it becomes an error value that ends the comprehension; every later step throws too.
    if (budget.used > limit) throw new Error('cost limit exceeded');
    return condition;
  });
  const parsed = parse(source);
  meterComprehensions(parsed.expr);
  const run = plan(celEnv({ funcs: [...strings, step] }), parsed);
  return Object.freeze({
    source,
    evaluate(bindings: Readonly<Record<string, unknown>>): CelOutcome {
      budget.used = 0;
      // A planned expression returns errors (unsupported inputs included) rather than throwing.
      const result: CelResult = run(bindings as Record<string, CelInput>);
      // Whatever the expression made of the errors (`true || error` is true), it did not finish.
      if (budget.used > limit) {
        return {
          passed: false,
          reason: `CEL evaluation stopped: it exceeded the cost limit of ${limit} comprehension steps`,
        };
      }
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

/**
 * Compiled programs by source, least recently used first out: a worker evaluates what the
 * snapshots in use name, and keeps at most `maxEntries` of them and `maxSourceBytes` of source
 * (zero: it keeps nothing, and every request compiles).
 */
export class CelProgramCache {
  readonly #programs = new Map<string, CelProgram>();
  readonly #limits: CelLimits;
  readonly #maxEntries: number;
  readonly #maxSourceBytes: number;
  #sourceBytes = 0;

  constructor(limits: CelLimits, bounds: { readonly maxEntries: number; readonly maxSourceBytes: number }) {
    this.#limits = limits;
    this.#maxEntries = bounds.maxEntries;
    this.#maxSourceBytes = bounds.maxSourceBytes;
  }

  get size(): number {
    return this.#programs.size;
  }

  /** The program of `source`, compiled now if it is not kept. Throws as {@link compileCel}. */
  get(source: string): CelProgram {
    let program = this.#programs.get(source);
    if (program === undefined) {
      program = compileCel(source, this.#limits);
      this.#sourceBytes += source.length;
    } else this.#programs.delete(source);
    this.#programs.set(source, program);
    for (const [oldest] of this.#programs) {
      if (this.#programs.size <= this.#maxEntries && this.#sourceBytes <= this.#maxSourceBytes) break;
      this.#programs.delete(oldest);
      this.#sourceBytes -= oldest.length;
    }
    return program;
  }
}

/** What a CEL worker is asked: to compile (check) an expression, or to evaluate one. */
export type CelRequest =
  | { readonly op: 'compile'; readonly source: string }
  | { readonly op: 'eval'; readonly source: string; readonly bindings: Readonly<Record<string, unknown>> };

/**
 * A CEL worker's answer: to a compile, whether it parses; to an evaluation, always an outcome (an
 * expression that no longer parses fails the policy, saying why).
 */
export type CelAnswer =
  | { readonly ok: true; readonly outcome?: CelOutcome }
  | { readonly ok: false; readonly error: string };

/** A worker's request handler over its own cache (see cel-worker.ts). Never throws. */
export function celRequestHandler(cache: CelProgramCache): (request: CelRequest) => CelAnswer {
  return (request) => {
    let program: CelProgram;
    try {
      program = cache.get(request.source);
    } catch (error) {
      const message = (error as Error).message;
      if (request.op === 'compile') return { ok: false, error: message };
      return { ok: true, outcome: { passed: false, reason: `CEL evaluation failed: ${message}` } };
    }
    if (request.op === 'compile') return { ok: true };
    return { ok: true, outcome: program.evaluate(request.bindings) };
  };
}
