import { readFileSync } from 'node:fs';
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
