import { spawn } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessGroup } from '@signet/testbed';

// A watchdog outside Node. The ProcessGroup's own exit and signal handlers cannot help when the
// Node process dies without running them: on Ctrl-C, vitest may kill its worker before the
// handlers' SIGKILL goes out, and a kube-apiserver that got SIGTERM after etcd was gone hangs in
// its graceful shutdown forever. The reaper polls the Node process and, once it is gone, kills
// every process group listed in the run directory's pid file.
const SCRIPT = `
parent="$1"; pids="$2"
while kill -0 "$parent" 2>/dev/null; do sleep 0.5; done
[ -f "$pids" ] || exit 0
for pid in $(cat "$pids"); do kill -KILL "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; done
`;

export interface Reaper {
  /** Rewrites the pid file from the group's processes (they start and stop over time). */
  refresh(): Promise<void>;
  /** Normal shutdown: the group was stopped, the reaper is not needed any more. */
  dismiss(): void;
}

/** Starts the watchdog for `group` and keeps its pid file current (every second, and on `refresh`). */
export function startReaper(group: ProcessGroup): Reaper {
  const pidFile = join(group.runDir, 'pids');
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'signet-e2e-reaper', String(process.pid), pidFile], {
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => {
    // Without /bin/sh there is no watchdog; the ProcessGroup's handlers still run on a normal exit.
  });
  child.unref();
  let writing = Promise.resolve();
  const refresh = () => {
    writing = writing.then(async () => {
      const pids = group.processes.filter((p) => p.running).map((p) => p.pid);
      const temporary = `${pidFile}.tmp`;
      await writeFile(temporary, pids.map((pid) => `${pid}\n`).join(''));
      await rename(temporary, pidFile);
    });
    return writing.catch(() => {});
  };
  const timer = setInterval(() => void refresh(), 1_000);
  timer.unref();
  return {
    refresh,
    dismiss: () => {
      clearInterval(timer);
      if (child.pid !== undefined) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
  };
}
