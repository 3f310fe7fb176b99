// The cloud SDKs are optional peer dependencies, loaded by name on first use. Each case runs this
// package's sources in a Node process where the SDK cannot be found, as on an install without it
// (`helpers/hide-modules.mjs`), and asks the provider for a credential: a CREDENTIALS_FAILED
// registry error that names the package to install, with an SdkNotInstalledError as its cause.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const hook = new URL('./helpers/hide-modules.mjs', import.meta.url).pathname;
const source = new URL('../src/index.ts', import.meta.url).href;

/** What asking `provider` for a credential of `registry` gives, with `hidden` not installed. */
async function askWithout(hidden: readonly string[], provider: string, registry: string) {
  const script = `
    const registry = await import(${JSON.stringify(source)});
    const [provider] = registry.createCloudProviders([${JSON.stringify(provider)}]);
    const client = new registry.RegistryClient();
    const call = { signal: AbortSignal.timeout(5000), deadline: Date.now() + 5000 };
    try {
      await provider.credentialFor({ registry: ${JSON.stringify(registry)}, repository: 'team/app' }, { transport: client.transport, call });
      console.log(JSON.stringify({ passed: true }));
    } catch (error) {
      const { name, code, provider, module } = error.cause;
      console.log(JSON.stringify({ code: error.code, message: error.message, causeInMessage: error.causeInMessage, cause: { name, code, provider, module } }));
    }`;
  const { stdout } = await run(process.execPath, ['--import', hook, '--input-type=module', '-e', script], {
    env: { ...process.env, SIGNET_HIDE_MODULES: hidden.join(',') },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('a cloud provider whose SDK is not installed', () => {
  it.each([
    ['ecr', '123456789012.dkr.ecr.eu-west-1.amazonaws.com', '@aws-sdk/client-ecr'],
    ['ecr', '123456789012.dkr.ecr.eu-west-1.amazonaws.com', '@aws-sdk/client-ecr-public'],
    ['gcp', 'europe-docker.pkg.dev', 'google-auth-library'],
    ['acr', 'team.azurecr.io', '@azure/identity'],
  ])('%s credentials for %s, without %s, name the package to install', async (provider, registry, module) => {
    const outcome = await askWithout([module], provider, registry);
    expect(outcome).toEqual({
      code: 'CREDENTIALS_FAILED',
      message: `registry ${registry} repository team/app: cloud credentials ${provider} need ${module}, which is not installed; install it`,
      causeInMessage: true,
      cause: { name: 'SdkNotInstalledError', code: 'SDK_NOT_INSTALLED', provider, module },
    });
  });
});

describe('importSdk, in this process', () => {
  it('loads an installed module, and names one that is not installed', async () => {
    const { importSdk, SdkNotInstalledError } = await import('../src/cloud/sdk.js');
    expect(typeof (await importSdk<typeof import('node:path')>('gcp', 'node:path')).join).toBe('function');
    const missing = await importSdk('gcp', '@signet/not-installed-anywhere').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(SdkNotInstalledError);
    expect(missing).toMatchObject({
      code: 'SDK_NOT_INSTALLED',
      provider: 'gcp',
      module: '@signet/not-installed-anywhere',
    });
  });

  it('passes on what else a module throws while loading', async () => {
    const { importSdk } = await import('../src/cloud/sdk.js');
    const broken = `data:text/javascript,${encodeURIComponent('throw new Error("broken SDK")')}`;
    await expect(importSdk('acr', broken)).rejects.toThrow('broken SDK');
  });

  it('is a CREDENTIALS_FAILED registry error that says the cause once', async () => {
    const { providerFailure } = await import('../src/cloud/provider.js');
    const { SdkNotInstalledError } = await import('../src/cloud/sdk.js');
    const error = providerFailure(
      'ECR',
      { registry: 'r.example', repository: 'a' },
      'GetAuthorizationToken',
      new SdkNotInstalledError('ecr', '@aws-sdk/client-ecr'),
    );
    expect(error).toMatchObject({
      code: 'CREDENTIALS_FAILED',
      causeInMessage: true,
      message:
        'registry r.example repository a: cloud credentials ecr need @aws-sdk/client-ecr, which is not installed; install it',
    });
  });
});
