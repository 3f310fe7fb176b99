// The cloud SDKs are optional peer dependencies (about 58 MB between them, and most users of this
// package never load one): a provider imports its SDK by name the first time it is asked for a
// credential, so only a deployment that enables a provider needs that provider's SDK installed.
// One that enables a provider without it is told which package to install.

/** A provider was asked for a credential and its SDK is not installed. */
export class SdkNotInstalledError extends Error {
  override readonly name = 'SdkNotInstalledError';
  readonly code = 'SDK_NOT_INSTALLED';
  /** `ecr`, `gcp`, `acr`. */
  readonly provider: string;
  /** The package to install: `@aws-sdk/client-ecr`. */
  readonly module: string;

  constructor(provider: string, module: string, options?: ErrorOptions) {
    super(`cloud credentials ${provider} need ${module}, which is not installed; install it`, options);
    this.provider = provider;
    this.module = module;
  }
}

/** `import(module)` for `provider`; a module that cannot be found is {@link SdkNotInstalledError}. */
export async function importSdk<M>(provider: string, module: string): Promise<M> {
  try {
    return (await import(/* @vite-ignore */ module)) as M;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND') {
      throw new SdkNotInstalledError(provider, module, { cause: error });
    }
    throw error;
  }
}
