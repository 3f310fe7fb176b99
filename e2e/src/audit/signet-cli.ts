// Runs the built `signet` CLI as a user would, capturing its output and exit code.
import { spawn } from 'node:child_process';
import { signetCliPath } from '../signet-webhook.js';

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node apps/webhook/dist/bin/signet.js <args>`, killed after `timeoutMs`. */
export function runSignetCli(
  args: readonly string[],
  options: { readonly timeoutMs?: number; readonly input?: string; readonly home: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [signetCliPath(), ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.home },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
