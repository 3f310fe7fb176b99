import { describe, expect, it } from 'vitest';
import { WasmFormatError, withMemoryLimit } from '../src/wasm-limits.js';

const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
// (module (type) (memory 2)) as bytes: a type section, then a memory section with a minimum only.
const TYPE_SECTION = [0x01, 0x04, 0x01, 0x60, 0x00, 0x00];
const module = (memory: number[]) => Uint8Array.from([...HEADER, ...TYPE_SECTION, ...memory]);

describe('withMemoryLimit', () => {
  it('gives the memory a maximum, and WebAssembly enforces it', () => {
    const limited = withMemoryLimit(module([0x05, 0x03, 0x01, 0x00, 0x02]), 3 * 65536);
    expect([...limited.subarray(14)]).toEqual([0x05, 0x04, 0x01, 0x01, 0x02, 0x03]);
    expect(WebAssembly.validate(limited)).toBe(true);
  });

  it('encodes large limits as LEB128 and replaces an existing maximum', () => {
    const limited = withMemoryLimit(module([0x05, 0x04, 0x01, 0x01, 0x02, 0x05]), 256 * 1024 * 1024);
    expect([...limited.subarray(14)]).toEqual([0x05, 0x05, 0x01, 0x01, 0x02, 0x80, 0x20]);
  });

  it('refuses what it cannot bound', () => {
    expect(() => withMemoryLimit(Uint8Array.from([1, 2, 3, 4]), 65536)).toThrow(WasmFormatError);
    expect(() => withMemoryLimit(module([]), 65536)).toThrow('the module defines no memory');
    expect(() => withMemoryLimit(module([0x05, 0x01, 0x00]), 65536)).toThrow('expected one memory, found 0');
    expect(() => withMemoryLimit(module([0x05, 0x03, 0x01, 0x03, 0x02]), 65536)).toThrow(
      'unsupported memory flags 3',
    );
    expect(() => withMemoryLimit(module([0x05, 0x03, 0x01, 0x00, 0x09]), 65536)).toThrow('needs 9 pages');
    expect(() => withMemoryLimit(module([0x05, 0x03, 0x01, 0x00, 0x80]), 65536)).toThrow('truncated');
  });
});
