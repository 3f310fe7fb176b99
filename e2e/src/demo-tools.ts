// What `pnpm demo` runs, and so all that its first run builds: nothing the story does not start.
import { KIND_TOOL_NAMES, type ToolName } from '@signet/testbed';
import { LOCAL_CLUSTER_TOOLS } from './cluster/local-cluster.js';

/** The story on loopback: the control plane, one registry (CNCF distribution), crane and cosign. */
export const DEMO_TOOLS: readonly ToolName[] = [...LOCAL_CLUSTER_TOOLS, 'registry', 'crane', 'cosign'];

/** The tools `pnpm demo` (or `pnpm demo --kind`, the kind suite's) builds when missing. */
export function demoTools(kind: boolean): readonly ToolName[] {
  return kind ? KIND_TOOL_NAMES : DEMO_TOOLS;
}
