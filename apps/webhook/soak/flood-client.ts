// A separate process that attacks a Signet server, so that its TLS and body work does not share
// the measuring client's event loop:
//   node flood-client.ts flood PORT CA_FILE CONNECTIONS BYTES SECONDS  (keep CONNECTIONS bodies of BYTES in flight)
//   node flood-client.ts stall PORT CA_FILE CONNECTIONS BYTES SECONDS  (send BYTES of a larger declared body, then stop)
//   node flood-client.ts objects PORT CA_FILE CONNECTIONS BYTES SECONDS (as flood, but a well-formed review
//     whose object holds BYTES/3 empty JSON objects: cheap to send, the costliest body to parse)
//   node flood-client.ts silent PORT CA_FILE CONNECTIONS 0 SECONDS  (keep CONNECTIONS TCP connections open
//     that never send a TLS ClientHello; reopen each one the server closes)
//   node flood-client.ts validate PORT CA_FILE CONNECTIONS BYTES SECONDS (POST /validate-policy without
//     pause: distinct CUE and Rego ClusterImagePolicies of about BYTES each, CUE compiles that run past
//     any deadline, and TrustRoots naming mirrors on private addresses or carrying junk repositories)
//   node flood-client.ts cel PORT CA_FILE CONNECTIONS 0 SECONDS  (Pod CREATEs whose 200 env entries make
//     the soak's cel-heavy policy run three nested all() over them)
// Prints one JSON line with what it saw when done.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { createConnection } from 'node:net';
import { connect } from 'node:tls';

const [mode, portText, caFile, connectionsText, bytesText, secondsText] = process.argv.slice(2);
const port = Number(portText);
const ca = readFileSync(caFile as string, 'utf8');
const connections = Number(connectionsText);
const bytes = Number(bytesText);
const until = Date.now() + Number(secondsText) * 1000;
const statuses = new Map<number, number>();
// The address the attack comes from (SOURCE_ADDRESS, default the kernel's choice): another loopback
// address than the measuring client's, as a Pod's is another than the API server's.
const localAddress = process.env.SOURCE_ADDRESS;
const from = localAddress === undefined ? {} : { localAddress };
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
        { host: '127.0.0.1', port, path: '/validate', method: 'POST', ca, agent, ...from },
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
          const socket = connect({ host: '127.0.0.1', port, ca, ...from }, () => resolve(socket));
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

/** An AdmissionReview of a policy object, as the API server sends it to /validate-policy. */
function policyReview(
  object: { kind: string; metadata: { name: string } } & Record<string, unknown>,
): Buffer {
  const resource = object.kind === 'TrustRoot' ? 'trustroots' : 'clusterimagepolicies';
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `validate-${Math.random()}`,
        kind: { group: 'policy.sigstore.dev', version: 'v1beta1', kind: object.kind },
        resource: { group: 'policy.sigstore.dev', version: 'v1beta1', resource },
        name: object.metadata.name,
        operation: 'CREATE',
        userInfo: { username: 'attacker' },
        object,
        oldObject: null,
        dryRun: false,
      },
    }),
  );
}

/** The n-th object of the validation flood: each source distinct, so no cache can answer it. */
function validationObject(n: number, size: number): Buffer {
  const name = `flood-${process.pid}-${n}`;
  const fields = Math.max(1, Math.floor(size / 24));
  const cip = (type: string, data: string) =>
    policyReview({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name },
      spec: {
        images: [{ glob: 'registry.example/**' }],
        authorities: [{ static: { action: 'pass' } }],
        policy: { type, data },
      },
    });
  switch (n % 5) {
    case 0: // a large CUE policy that compiles
      return cip('cue', Array.from({ length: fields }, (_, i) => `f${n}_${i}: int | *${i}`).join('\n'));
    case 1: // a large Rego policy that compiles
      return cip(
        'rego',
        `package sigstore\nimport rego.v1\ndefault isCompliant := true\n${Array.from({ length: fields }, (_, i) => `r${n}_${i} := ${i}`).join('\n')}`,
      );
    case 2: // a CUE compile that runs past any review's deadline
      return cip(
        'cue',
        `import "list"\nx${n}: [for a in list.Range(0, 300, 1) for b in list.Range(0, 300, 1) {a*b}]`,
      );
    case 3: // a TrustRoot whose mirror is on a private address (checked for form only, never fetched)
      return policyReview({
        apiVersion: 'policy.sigstore.dev/v1alpha1',
        kind: 'TrustRoot',
        metadata: { name },
        spec: {
          remote: {
            mirror: `http://10.${n % 250}.0.1:8080`,
            root: Buffer.from(JSON.stringify({ signed: { _type: 'root', version: 1 } })).toString('base64'),
          },
        },
      });
    default: // a TrustRoot whose repository is junk of about `size` bytes
      return policyReview({
        apiVersion: 'policy.sigstore.dev/v1alpha1',
        kind: 'TrustRoot',
        metadata: { name },
        spec: {
          repository: {
            root: Buffer.from(JSON.stringify({ signed: { _type: 'root', version: 1 } })).toString('base64'),
            mirrorFS: Buffer.alloc(Math.floor(size * 0.7), n % 251).toString('base64'),
          },
        },
      });
  }
}

/** A Pod CREATE whose image the soak's cel-heavy policy matches, with 200 env entries for it to walk. */
function celPod(n: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `cel-${n}`,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        operation: 'CREATE',
        userInfo: { username: 'attacker' },
        namespace: 'default',
        name: `cel-${n}`,
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `cel-${n}`, namespace: 'default' },
          spec: {
            containers: [
              {
                name: 'app',
                image: `cel.invalid/app@sha256:${'c'.repeat(64)}`,
                env: Array.from({ length: 200 }, (_, i) => ({ name: `E${i}`, value: String(n + i) })),
              },
            ],
          },
        },
        dryRun: false,
      },
    }),
  );
}

/** Keeps `connections` requests in flight, each built by `next`, to `path`. */
async function keepPosting(path: string, next: (n: number) => Buffer): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port, path: `${path}?timeout=10s`, method: 'POST', ca, agent, ...from },
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
      req.end(next(sent++));
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) await one();
    }),
  );
  agent.destroy();
}

/** TCP connections that never send a ClientHello; each one the server closes is opened again. */
async function silent(): Promise<void> {
  const open = () =>
    new Promise<void>((resolve) => {
      if (Date.now() >= until) return resolve();
      const socket = createConnection({ host: '127.0.0.1', port, ...from });
      const timer = setTimeout(() => socket.destroy(), Math.max(0, until - Date.now()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        count(0);
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) await open();
    }),
  );
}

const modes: Record<string, () => Promise<void>> = {
  flood: () => flood(false),
  objects: () => flood(true),
  stall,
  silent,
  validate: () => keepPosting('/validate-policy', (n) => validationObject(n, bytes)),
  cel: () => keepPosting('/validate', celPod),
};
const attack = modes[mode as string];
if (attack === undefined) throw new Error(`unknown mode ${JSON.stringify(mode)}`);
await attack();
process.stdout.write(`${JSON.stringify({ mode, statuses: Object.fromEntries(statuses) })}\n`);
