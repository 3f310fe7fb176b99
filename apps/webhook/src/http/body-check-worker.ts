// The worker thread that checks large AdmissionReview bodies off the event loop. A body's parse
// cost follows how many JSON objects and arrays it holds, not its bytes: 4.1 MB of `{},` is 1.38
// million objects and up to 1.7 s of `JSON.parse`. So the bytes are first counted (one linear scan
// that allocates nothing), a body over the bound is refused unparsed, and one within it is parsed
// and validated here, so that the event loop parses only bodies that are valid and cheap.
// Imports only Node's modules, a package, types, and its own modules by the extension it runs
// with, so it runs from source as from dist.
import { parentPort, workerData } from 'node:worker_threads';
import { AdmissionReviewError, parseAdmissionReviewJson } from '@signet/k8s-types';
import type { BodyCheckReply, BodyCheckRequest, BodyCheckStart } from './body-check.js';

const port = parentPort;
if (port === null) throw new Error('the body check must run in a worker thread');
const niceness = await import('@signet/policy-engines/thread-priority');
niceness.lowerThreadPriority((workerData as BodyCheckStart).threadNiceness);

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting @signet/k8s-types accepts (100 levels inside the objects, 2 for the review around
 * them). Deeper bodies are left to its parser, whose own scan refuses them before `JSON.parse`
 * with the message the API server is to see; this constant only orders the two refusals.
 */
const NESTING_LIMIT = 102;

/**
 * Whether JSON `bytes` nest too deep or hold more than `limit` objects and arrays; the scan stops
 * at the first. UTF-8 never uses these six bytes inside a multi-byte character, so the bytes are
 * scanned without decoding.
 */
function measure(bytes: Uint8Array, limit: number): 'deep' | 'many' | 'fine' {
  let count = 0;
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = stringEnd(bytes, i + 1);
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > NESTING_LIMIT) return 'deep';
      if (++count > limit) return 'many';
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return 'fine';
}

/** The index of the quote that closes the string whose first character is at `from`. */
function stringEnd(bytes: Uint8Array, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i;
  }
  return bytes.length;
}

/** The chunks in one buffer. */
function join(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function check(request: BodyCheckRequest): BodyCheckReply {
  const { id, maxContainers } = request;
  const bytes = join(request.chunks, request.size);
  if (measure(bytes, maxContainers) === 'many') {
    return {
      id,
      verdict: 'too-large',
      message: `the AdmissionReview holds more than ${maxContainers} JSON objects and arrays`,
    };
  }
  try {
    parseAdmissionReviewJson(bytes);
    return { id, verdict: 'ok', bytes };
  } catch (error) {
    const known = error instanceof AdmissionReviewError;
    return {
      id,
      verdict: 'malformed',
      uid: known ? (error.uid ?? '') : '',
      path: known ? error.path : '',
      problem: known ? error.problem : String(error),
    };
  }
}

port.on('message', (request: BodyCheckRequest) => {
  const reply = check(request);
  // A body that may be parsed goes back without a copy.
  port.postMessage(reply, reply.verdict === 'ok' ? [reply.bytes.buffer as ArrayBuffer] : []);
});
