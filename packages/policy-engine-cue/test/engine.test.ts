// The package as @signet/policy-engines loads it: `engine` names CUE and the host interface,
// and its file is the module the build wrote (the size and SHA-256 its manifest records) with the
// exports the host calls. The host's own tests evaluate policies with it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { engine } from '../src/index.ts';

describe('@signet/policy-engine-cue', () => {
  it('exports the CUE engine of host interface 1, a file of this package', () => {
    expect(engine).toEqual({
      language: 'cue',
      abi: 1,
      wasmPath: fileURLToPath(new URL('../engines/cue.wasm', import.meta.url)),
    });
    expect(Object.isFrozen(engine)).toBe(true);
  });

  it('ships the module its build wrote, which exports what the host calls', async () => {
    const manifest = JSON.parse(await readFile(new URL('../engines/manifest.json', import.meta.url), 'utf8'));
    const bytes = await readFile(engine.wasmPath);
    expect({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }).toEqual(
      manifest.files.cue,
    );
    const module = await WebAssembly.compile(bytes);
    expect(WebAssembly.Module.exports(module).map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['memory', 'signet_alloc', 'signet_call']),
    );
  });
});
