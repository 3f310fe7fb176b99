// A separate process that attacks a Signet server, so that its TLS and body work does not share
// the measuring client's event loop:
//   node flood-client.ts flood PORT CA_FILE CONNECTIONS BYTES SECONDS  (keep CONNECTIONS bodies of BYTES in flight)
//   node flood-client.ts stall PORT CA_FILE CONNECTIONS BYTES SECONDS  (send BYTES of a larger declared body, then stop)
//   node flood-client.ts objects PORT CA_FILE CONNECTIONS BYTES SECONDS (as flood, but a well-formed review
//     whose object holds BYTES/3 empty JSON objects: cheap to send, the costliest body to parse)
// Prints one JSON line with what it saw when done.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect } from 'node:tls';

const [mode, portText, caFile, connectionsText, bytesText, secondsText] = process.argv.slice(2);
const port = Number(portText);
const ca = readFileSync(caFile as string, 'utf8');
const connections = Number(connectionsText);
const bytes = Number(bytesText);
const until = Date.now() + Number(secondsText) * 1000;
const statuses = new Map<number, number>();
const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);

function body(size: number): Buffer {
  const head = Buffer.from(
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"flood","pad":"',
  );
  const tail = Buffer.from('"}}');
  return Buffer.concat([head, Buffer.alloc(size - head.length - tail.length, 0x61), tail]);
}

/** A Pod CREATE review whose object carries an array of empty objects, about `size` bytes long. */
function objectsBody(size: number): Buffer {
  const review = (fill: string) =>
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"objects","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{"username":"attacker"},"namespace":"default","name":"p","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[],"x":[${fill}]}}}}`;
  const count = Math.floor((size - review('').length) / 3);
  return Buffer.from(review(Array(count).fill('{}').join(',')));
}

async function flood(objects = false): Promise<void> {
  const payload = objects ? objectsBody(bytes) : body(bytes);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const one = () =>
    new Promise<void>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/validate', method: 'POST', ca, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            count(res.statusCode ?? 0);
            resolve();
          });
        },
      );
      req.on('error', () => {
        count(-1);
        resolve();
      });
      req.end(payload);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) await one();
    }),
  );
  agent.destroy();
}

async function stall(): Promise<void> {
  const sockets = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<ReturnType<typeof connect>>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port, ca }, () => resolve(socket));
          socket.on('error', () => count(-1));
          socket.on('data', (chunk: Buffer) => {
            const match = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'));
            if (match) count(Number(match[1]));
          });
        }),
    ),
  );
  for (const socket of sockets) {
    socket.write(
      `POST /validate HTTP/1.1\r\nHost: signet\r\nContent-Type: application/json\r\nContent-Length: ${Math.ceil(bytes * 1.1)}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(bytes, 0x61));
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
  for (const socket of sockets) socket.destroy();
}

await (mode === 'stall' ? stall() : flood(mode === 'objects'));
process.stdout.write(`${JSON.stringify({ mode, statuses: Object.fromEntries(statuses) })}\n`);
