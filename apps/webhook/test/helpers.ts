import { readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { Writable } from 'node:stream';

/** A review fixture from @signet/k8s-types' test fixtures (real-shaped AdmissionReview JSON). */
export function reviewFixture(name: string): string {
  return readFileSync(new URL(`../../../packages/k8s-types/test/fixtures/${name}`, import.meta.url), 'utf8');
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly json: () => Record<string, unknown>;
  readonly peerSerial: string | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** POSTs over real TLS, trusting only `ca`. */
export function post(
  url: string,
  body: string | Buffer,
  ca: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        const socket = res.socket as unknown as { getPeerCertificate?: () => { serialNumber?: string } };
        const peerSerial = socket.getPeerCertificate?.().serialNumber;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            json: () => JSON.parse(text),
            peerSerial,
            headers: res.headers,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A pino destination that keeps the JSON lines for assertions. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.lines.push(JSON.parse(line));
    done();
  }
}

/** A thread of this process: its name (Node names a worker's thread by its `name`) and nice value. */
export interface ThreadPriority {
  readonly name: string;
  readonly nice: number;
}

/** The threads of this process, from /proc (Linux); the main thread's id is the process's. */
export function threadPriorities(): { readonly main: ThreadPriority; readonly all: ThreadPriority[] } {
  const read = (tid: string | number): ThreadPriority => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) };
  };
  return { main: read(process.pid), all: readdirSync('/proc/self/task').map(read) };
}
