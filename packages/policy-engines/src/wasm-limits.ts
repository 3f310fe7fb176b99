// Bounds a WebAssembly module's own memory. Go's wasip1 output defines its memory with a minimum
// and no maximum, so a policy that allocates without bound would grow it until the process dies;
// with a maximum, `memory.grow` fails, Go's runtime reports "out of memory" and the instance
// stops: the evaluation fails and the engine is restarted.
const MEMORY_SECTION = 5;
const WASM_PAGE = 64 * 1024;

export class WasmFormatError extends Error {
  override readonly name = 'WasmFormatError';
}

function readLeb(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let next = offset;
  for (;;) {
    const byte = bytes[next];
    if (byte === undefined || shift > 28) throw new WasmFormatError('truncated LEB128 number');
    next += 1;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next };
    shift += 7;
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    const byte = rest % 128;
    rest = Math.floor(rest / 128);
    out.push(rest > 0 ? byte | 0x80 : byte);
  } while (rest > 0);
  return out;
}

/**
 * A copy of `module` whose (single, 32-bit) memory may grow to at most `maxBytes`. Throws
 * {@link WasmFormatError} when the module is not one this can bound.
 */
export function withMemoryLimit(module: Uint8Array, maxBytes: number): Uint8Array {
  if (module[0] !== 0 || module[1] !== 0x61 || module[2] !== 0x73 || module[3] !== 0x6d) {
    throw new WasmFormatError('not a WebAssembly module');
  }
  const maxPages = Math.max(1, Math.floor(maxBytes / WASM_PAGE));
  let offset = 8;
  while (offset < module.length) {
    const id = module[offset] as number;
    const size = readLeb(module, offset + 1);
    const end = size.next + size.value;
    if (id === MEMORY_SECTION) {
      const count = readLeb(module, size.next);
      if (count.value !== 1) throw new WasmFormatError(`expected one memory, found ${count.value}`);
      const flags = module[count.next];
      if (flags !== 0 && flags !== 1) throw new WasmFormatError(`unsupported memory flags ${flags}`);
      const min = readLeb(module, count.next + 1);
      if (min.value > maxPages) {
        throw new WasmFormatError(`the module needs ${min.value} pages, more than the limit of ${maxPages}`);
      }
      const body = [1, 1, ...leb(min.value), ...leb(maxPages)];
      const section = Uint8Array.from([MEMORY_SECTION, ...leb(body.length), ...body]);
      const out = new Uint8Array(offset + section.length + (module.length - end));
      out.set(module.subarray(0, offset), 0);
      out.set(section, offset);
      out.set(module.subarray(end), offset + section.length);
      return out;
    }
    offset = end;
  }
  throw new WasmFormatError('the module defines no memory');
}
