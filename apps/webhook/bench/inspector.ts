// Asks a Node process started with `--inspect=127.0.0.1:PORT` for a full garbage collection and its
// live heap afterwards, over the DevTools protocol: tells a leak (live heap grows) from a heap V8 has
// not collected yet, without changing the server.

interface Reply {
  readonly id?: number;
  readonly result?: { readonly result?: { readonly value?: unknown } };
  readonly error?: { readonly message: string };
}

export class Inspector {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  #next = 0;

  constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener('message', (event) => {
      const reply = JSON.parse(String(event.data)) as Reply;
      if (reply.id !== undefined) this.#pending.get(reply.id)?.(reply);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    const url = targets[0]?.webSocketDebuggerUrl;
    if (url === undefined) throw new Error(`no inspector target on port ${port}`);
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('error', reject, { once: true });
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Reply> {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (reply) => {
        this.#pending.delete(id);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply);
      });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The V8 heap in use after a full garbage collection, in MiB: what is really alive. */
  async liveHeapAfterGc(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage');
    const reply = await this.call('Runtime.evaluate', {
      expression: 'process.memoryUsage().heapUsed',
      returnByValue: true,
    });
    return Number(reply.result?.result?.value) / 2 ** 20;
  }

  close(): void {
    this.#socket.close();
  }
}
