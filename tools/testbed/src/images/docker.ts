import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { TestbedError, tailLines } from '../errors.js';
import { type RunResult, runCommand } from '../exec.js';

/**
 * The `docker` CLI against one engine (`DOCKER_HOST`), every command with a deadline. The legacy
 * builder is forced (`DOCKER_BUILDKIT=0`): Debian's engine has no BuildKit plugin and nothing here
 * may pull a frontend image.
 */
export class Docker {
  readonly env: NodeJS.ProcessEnv;

  constructor(host: string | undefined = process.env.DOCKER_HOST) {
    this.env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      DOCKER_BUILDKIT: '0',
      ...(host ? { DOCKER_HOST: host } : {}),
    };
  }

  run(args: readonly string[], options: { timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
    return runCommand('docker', args, {
      env: this.env,
      timeoutMs: options.timeoutMs ?? 120_000,
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  }

  async imageExists(reference: string): Promise<boolean> {
    try {
      await this.run(['image', 'inspect', '--format', '{{.Id}}', reference], { timeoutMs: 30_000 });
      return true;
    } catch {
      return false;
    }
  }

  /** `docker import` of a root filesystem tarball with Dockerfile-style `changes` (ENTRYPOINT, USER, ...). */
  importTarball(tarball: string, reference: string, changes: readonly string[] = []): Promise<RunResult> {
    const args = ['import', ...changes.flatMap((change) => ['--change', change]), tarball, reference];
    return this.run(args, { timeoutMs: 600_000 });
  }

  /** `docker save` of images into one tarball (`docker load` and `ctr images import` read it). */
  save(references: readonly string[], output: string): Promise<RunResult> {
    return this.run(['save', '--output', output, ...references], { timeoutMs: 900_000 });
  }

  load(tarball: string): Promise<RunResult> {
    return this.run(['load', '--input', tarball], { timeoutMs: 900_000 });
  }

  /** Runs `docker <args>` with a file as its standard input (`docker exec -i ... < file`). */
  runWithFileInput(args: readonly string[], file: string, timeoutMs = 900_000): Promise<void> {
    return pipeFile('docker', args, file, this.env, timeoutMs);
  }

  /** Runs `docker <args>` with its standard output written to a file (`docker export > file`). */
  runToFile(args: readonly string[], file: string, timeoutMs = 900_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('docker', args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = createWriteStream(file);
      child.stdout.pipe(out);
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-16_384);
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new TestbedError('COMMAND_FAILED', `docker ${args.join(' ')}: ${error.message}`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        out.end(() => {
          if (code === 0) resolve();
          else
            reject(
              new TestbedError(
                'COMMAND_FAILED',
                `docker ${args.join(' ')} exited ${code}\n${tailLines(stderr)}`,
              ),
            );
        });
      });
    });
  }
}

function pipeFile(
  command: string,
  args: readonly string[],
  file: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-16_384);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    createReadStream(file).pipe(child.stdin);
    child.stdin.on('error', () => {
      // The program may exit before reading everything; its exit status says why.
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new TestbedError('COMMAND_FAILED', `${command} ${args.join(' ')}: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else {
        reject(
          new TestbedError(
            'COMMAND_FAILED',
            `${command} ${args.join(' ')} < ${file} exited ${code}\n${tailLines(output)}`,
          ),
        );
      }
    });
  });
}
