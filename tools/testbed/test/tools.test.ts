import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TestbedError } from '../src/errors.ts';
import {
  cacheRoot,
  DEFAULT_TOOL_NAMES,
  ensureTools,
  GO_MODULES_DIR,
  KIND_TOOL_NAMES,
  TOOL_TABLE,
  toolPath,
  toolSpec,
} from '../src/tools.ts';
import { SOURCE_MODULES } from '../src/upstream.ts';

describe('the tool table', () => {
  it.each(TOOL_TABLE.map((tool) => [tool.name, tool] as const))(
    '%s is pinned in its go.mod',
    async (_, tool) => {
      const goMod = await readFile(join(GO_MODULES_DIR, tool.moduleDir, 'go.mod'), 'utf8');
      const goSum = await readFile(join(GO_MODULES_DIR, tool.moduleDir, 'go.sum'), 'utf8');
      // The version in the table (and so in the cache path) is the one go.mod builds.
      expect(goMod).toMatch(new RegExp(`\\b${tool.module.replaceAll('.', '\\.')} ${tool.version}\\b`));
      expect(goSum).toContain(`${tool.module} ${tool.version} h1:`);
      if (tool.packagePath !== '.') expect(goMod).toContain(tool.packagePath);
      // A go line above the installed toolchain would need GOTOOLCHAIN in every script.
      expect(goMod).toMatch(/^go 1\.26\.\d+$/m);
    },
  );

  it.each(Object.values(SOURCE_MODULES).map((m) => [m.module, m] as const))(
    'the source module %s is pinned in its go.mod and go.sum',
    async (_, spec) => {
      const goMod = await readFile(join(GO_MODULES_DIR, spec.dir, 'go.mod'), 'utf8');
      const goSum = await readFile(join(GO_MODULES_DIR, spec.dir, 'go.sum'), 'utf8');
      expect(goMod).toContain(`require ${spec.module} ${spec.version}`);
      expect(goSum).toContain(`${spec.module} ${spec.version} h1:`);
    },
  );

  it('stamps the Kubernetes version into the Kubernetes binaries', () => {
    const spec = toolSpec('kube-apiserver');
    expect(spec.ldflags).toContain(`-X k8s.io/component-base/version.gitVersion=${spec.version}`);
    expect(spec.ldflags).toContain('-X k8s.io/component-base/version.gitMinor=36');
  });
});

describe('cache paths', () => {
  it('gives our own programs a path by the digest of their source, the others by version', () => {
    const own = toolSpec('pause');
    expect(own.sourceDigest).toMatch(/^[0-9a-f]{12}$/);
    expect(toolPath('pause', { SIGNET_CACHE_DIR: '/c' })).toBe(
      `/c/bin/pause-${own.version}-src.${own.sourceDigest}/pause`,
    );
    expect(toolSpec('kubelet').sourceDigest).toBeUndefined();
  });

  it('builds the kind tools only when asked', () => {
    expect(DEFAULT_TOOL_NAMES).not.toContain('kind');
    expect(DEFAULT_TOOL_NAMES).toContain('kube-apiserver');
    expect(KIND_TOOL_NAMES).toEqual(
      expect.arrayContaining(['kind', 'kubelet', 'containerd', 'oci-runtime-wrapper']),
    );
  });

  it('lives under SIGNET_CACHE_DIR when it is set, by tool and version', () => {
    const env = { SIGNET_CACHE_DIR: '/somewhere' };
    expect(cacheRoot(env)).toBe('/somewhere');
    expect(toolPath('crane', env)).toBe(`/somewhere/bin/crane-${toolSpec('crane').version}/crane`);
  });

  it('defaults to ~/.cache/signet', () => {
    expect(cacheRoot({ HOME: '/home/x' })).toMatch(/\.cache\/signet$/);
  });
});

describe('ensureTools', () => {
  it('rejects an unknown tool by code', () => {
    expect(() => toolSpec('docker')).toThrow(expect.objectContaining({ code: 'UNKNOWN_TOOL' }));
  });

  it('says clearly when go is not on PATH', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'signet-cache-'));
    const error = await ensureTools(['crane'], { env: { SIGNET_CACHE_DIR: empty, PATH: empty } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TestbedError);
    expect(error).toMatchObject({ code: 'GO_NOT_FOUND' });
    expect((error as Error).message).toContain('is `go` on PATH?');
    await rm(empty, { recursive: true, force: true });
  });

  it('reports a cached binary without building it', async () => {
    await ensureTools(['crane'], { onProgress: (event) => console.log(`testbed: ${event.message}`) });
    const events: string[] = [];
    const paths = await ensureTools(['crane'], { onProgress: (event) => events.push(event.kind) });
    expect(paths.crane).toBe(toolPath('crane'));
    expect(events).toContain('cached');
  });
});
