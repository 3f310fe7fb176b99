import { readFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';

it('the README example runs and prints what the README shows', async () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  await import('./support/readme-example.js');
  expect(log).toHaveBeenCalledWith(
    false,
    `spec.containers[0].image registry.example/app@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: policy "release" (enforce): ` +
      'no valid signature: 1 found, 0 verified (signature does not match key "release-2026")',
  );
  log.mockRestore();
});

it('the README shows this example verbatim', () => {
  const source = readFileSync(new URL('./support/readme-example.ts', import.meta.url), 'utf8');
  const example = source
    .slice(source.indexOf('\n') + 1)
    .replace("from '../../src/index.js'", "from '@signet/core'");
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  expect(readme).toContain(example);
});
