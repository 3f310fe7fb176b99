// The `signet` command: `signet serve` runs the admission webhook, `signet verify` checks one image
// against policy YAML from a shell.
import { parseArgs } from 'node:util';
import { runServe, SERVE_OPTIONS, serveConfigFrom } from './commands/serve.js';
import { UsageError } from './commands/usage-error.js';
import { runVerify, VERIFY_OPTIONS } from './commands/verify.js';

const USAGE = `usage:
  signet serve [--port 8443] [--ops-port 8080] [--namespace NS] [--kubeconfig PATH | --policy-file FILE...]
               [--tls-cert-file F --tls-key-file F | --tls-self-managed --tls-secret NAME --service-name NAME]
               [--webhook-name signet] [--insecure-registry HOST:PORT...] [--cache-ttl 5m]
               [--no-resolve-digests] [--log-level info]
  signet verify IMAGE --policy FILE [--insecure-registry HOST:PORT...] [--timeout 30s]

Run 'signet serve --help' or 'signet verify --help' for the options.`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'serve') {
      const { values } = parseArgs({
        args: [...rest],
        options: SERVE_OPTIONS,
        strict: true,
        allowPositionals: false,
      });
      if (values.help) return print(USAGE, 0);
      return await runServe(serveConfigFrom(values, process.env));
    }
    if (command === 'verify') {
      const { values, positionals } = parseArgs({
        args: [...rest],
        options: VERIFY_OPTIONS,
        strict: true,
        allowPositionals: true,
      });
      if (values.help) return print(USAGE, 0);
      return await runVerify(positionals, values, process.stdout);
    }
    if (command === undefined || command === '--help' || command === '-h' || command === 'help')
      return print(USAGE, command ? 0 : 2);
    return print(`signet: unknown command ${JSON.stringify(command)}\n\n${USAGE}`, 2);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return print(`signet: ${(error as Error).message}\n\n${USAGE}`, 2);
    }
    throw error;
  }
}

function print(text: string, code: number): number {
  (code === 0 ? process.stdout : process.stderr).write(`${text}\n`);
  return code;
}
