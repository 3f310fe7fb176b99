#!/usr/bin/env node
// A Docker engine for the kind suite, started and stopped by pid:
//   node dist/bin/docker-engine.js start <dir>    prints `DOCKER_HOST=unix://<dir>/docker.sock`
//   node dist/bin/docker-engine.js stop <dir> [--remove-data]
import { startDockerEngine, stopDockerEngine } from '../docker-engine.js';

async function main(): Promise<void> {
  const [command, dir, ...rest] = process.argv.slice(2).filter((arg) => arg !== '--');
  if ((command !== 'start' && command !== 'stop') || !dir) {
    throw new Error('usage: docker-engine start|stop <dir> [--remove-data]');
  }
  if (command === 'start') {
    const engine = await startDockerEngine({
      dir,
      onProgress: (line) => console.error(`docker-engine: ${line}`),
    });
    console.log(`DOCKER_HOST=${engine.host}`);
    console.log(`DOCKERD_PID=${engine.pid}`);
  } else {
    await stopDockerEngine(dir, { removeData: rest.includes('--remove-data') });
    console.error(`docker-engine: stopped the engine in ${dir}`);
  }
}

main().catch((error: unknown) => {
  console.error(`docker-engine: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
