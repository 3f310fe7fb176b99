// Loads @signet/testbed (real registries, crane, cosign) and fails with an actionable message when it
// is not there: these tests must fail, never skip, when their real programs are missing.
import type * as Testbed from '@signet/testbed';

export type { Testbed };

export async function loadTestbed(): Promise<typeof Testbed> {
  try {
    return await import('@signet/testbed');
  } catch (error) {
    throw new Error(
      '@signet/testbed could not be loaded; build it with `pnpm --filter @signet/testbed build` ' +
        '(turbo does this before `test`)',
      { cause: error },
    );
  }
}

/** The tools, built from the Go module proxy on first use; a failure says which and why. */
export async function ensureTestTools<const N extends Testbed.ToolName>(
  testbed: typeof Testbed,
  names: readonly N[],
): Promise<Record<N, string>> {
  try {
    return await testbed.ensureTools(names, {
      onProgress: (event) => console.log(`testbed: ${event.message}`),
    });
  } catch (error) {
    throw new Error(
      `the real-registry tests need ${names.join(', ')} from @signet/testbed, which could not be built ` +
        `(warm the cache with \`pnpm --filter @signet/testbed build-tools\`): ${String(error)}`,
      { cause: error },
    );
  }
}
