import { KIND_TOOL_NAMES, TOOL_NAMES } from '@signet/testbed';
import { describe, expect, it } from 'vitest';
import { LOCAL_CLUSTER_TOOLS } from '../src/cluster/local-cluster.ts';
import { demoTools } from '../src/demo-tools.ts';

// The first `pnpm demo` builds only what the story runs: on a fresh machine every other tool was
// minutes of building before the story started (helm4, promtool, policy-controller and the kind
// suite's eleven took about 840 s of 2,416).

describe('demoTools', () => {
  it('is the control plane, one registry, crane and cosign for the story on loopback', () => {
    expect([...demoTools(false)].sort()).toEqual(
      [...LOCAL_CLUSTER_TOOLS, 'registry', 'crane', 'cosign'].sort(),
    );
  });

  it('is the kind suite’s tools for --kind', () => {
    expect(demoTools(true)).toEqual(KIND_TOOL_NAMES);
    expect(demoTools(true)).toEqual(
      expect.arrayContaining(['kind', 'kubelet', 'containerd', 'registry', 'helm']),
    );
  });

  it('never builds what only the chart tests, the benchmarks or the other suites use', () => {
    for (const kind of [false, true]) {
      const tools = demoTools(kind);
      for (const unused of ['helm4', 'promtool', 'policy-controller', 'forward-proxy', 'oci-registry']) {
        expect(tools).not.toContain(unused);
      }
      expect(tools.every((name) => TOOL_NAMES.includes(name))).toBe(true);
    }
    for (const kindOnly of ['kind', 'kubelet', 'containerd', 'coredns', 'helm']) {
      expect(demoTools(false)).not.toContain(kindOnly);
    }
  });
});
