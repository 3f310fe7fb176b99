import { spawn } from 'node:child_process';
import { TestbedError, tailLines } from './errors.js';

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Killed with SIGKILL after this long; every command has a deadline. */
  readonly timeoutMs: number;
  /** Written to the program's standard input, which is then closed. */
  readonly input?: string;
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a short-lived program to completion and returns its output. Throws a `TestbedError`
 * (`COMMAND_FAILED`, `COMMAND_TIMEOUT`) that shows the command line and the tail of its output.
 */
export function runCommand(file: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const shown = [file, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(
        new TestbedError('COMMAND_FAILED', `could not run ${shown}: ${error.message}`, { cause: error }),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const output = tailLines(`${stdout}\n${stderr}`);
      if (timedOut) {
        reject(
          new TestbedError(
            'COMMAND_TIMEOUT',
            `${shown} did not finish within ${options.timeoutMs} ms\n${output}`,
          ),
        );
      } else if (code !== 0) {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        reject(new TestbedError('COMMAND_FAILED', `${shown} ${how}\n${output}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
    child.stdin.on('error', () => {
      // The program may exit before reading its input; its exit status tells what happened.
    });
    child.stdin.end(options.input ?? '');
  });
}
