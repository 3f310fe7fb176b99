// What a command can work from when no cluster is found, named in that command's own flags (the
// kube layer only knows where it looked).
import type { FlagValues } from './flags.js';

/** ` (or ...)` for `signet COMMAND` given `values`, or nothing when the command needs a cluster. */
export function noClusterHint(command: string, values: FlagValues): string {
  if (command === 'serve') return ' (or run from policy files: --policy-file FILE)';
  if (command !== 'audit') return '';
  const manifests = values.filename !== undefined;
  const policies = values['policy-file'] !== undefined;
  if (manifests && !policies) return ' (or give the policies as files: --policy-file FILE)';
  if (!manifests && policies) return ' (or audit manifests instead: -f PATH)';
  return ' (or audit manifests without a cluster: -f PATH --policy-file FILE)';
}
