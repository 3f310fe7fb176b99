// Text for errors and other thrown values, on one line. An `Error` shows its message and then its
// `cause` chain; other values are shown as JSON. Never `[object Object]`, never a lost cause.

const MAX_DEPTH = 8;
const MAX_JSON = 300;

/**
 * An error whose message already says in words what its `cause` says in a machine's terms
 * (OpenSSL's `...:error:0A00010B:SSL routines:...`, a socket's code): the cause stays on the error
 * for logs and debugging, and is not repeated to the person reading the message.
 */
export interface CauseInMessage {
  readonly causeInMessage: boolean;
}

/**
 * `outer message: inner message: root cause`, with an `AggregateError`'s errors joined by `; `.
 * The chain stops at an error that says its cause itself (`CauseInMessage`).
 */
export function describeCause(cause: unknown): string {
  return oneLine(describe(cause, 0));
}

/** Replaces control characters (newlines included) by spaces, so a message stays one line. */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

function describe(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) return '...';
  if (!(value instanceof Error)) return describeValue(value);
  const text = ownText(value, depth);
  const said = (value as Partial<CauseInMessage>).causeInMessage === true;
  return value.cause === undefined || said ? text : `${text}: ${describe(value.cause, depth + 1)}`;
}

function ownText(error: Error, depth: number): string {
  if (!(error instanceof AggregateError)) return error.message === '' ? error.name : error.message;
  const inner = error.errors.map((item) => describe(item, depth + 1)).join('; ');
  return error.message === '' ? inner : `${error.message}: ${inner}`;
}

function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'function':
      return `function ${value.name === '' ? '(anonymous)' : value.name}`;
    case 'object':
      return value === null ? 'null' : describeObject(value);
    default:
      return String(value);
  }
}

function describeObject(value: object): string {
  try {
    const json = JSON.stringify(value);
    return json.length > MAX_JSON ? `${json.slice(0, MAX_JSON)}...` : json;
  } catch {
    // Cycles and BigInts: name the kind of value rather than print `[object Object]`.
    return `${value.constructor?.name ?? 'Object'} (not serializable)`;
  }
}
