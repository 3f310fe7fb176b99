// Who may hold the admission port's connections. A TCP connection that sends nothing costs the
// attacker nothing, so without a gate 1,024 of them filled the port and cut every new connection,
// the API server's included, until Node's 120 s handshake timeout (issue 21, finding 9). The gate:
//
// - closes a connection that has not finished its TLS handshake within a few seconds (Node's own
//   handshake timeout restarts at every byte; this one does not);
// - keeps each source address to its share of the port (so one Pod cannot take it all),
//   making room first by closing that source's oldest connection still in its handshake;
// - at the port's cap, makes room for a new connection by closing the oldest one still in its
//   handshake, from any source (the API server's handshake takes milliseconds; a silent one is
//   the oldest); only when every connection is past its handshake is the new one refused.
//
// Connections are counted, not requests: a kept-alive connection costs nothing per review here.
import type { Socket } from 'node:net';
import type { Server, TLSSocket } from 'node:tls';

export type RefusalReason = 'per-source' | 'capacity' | 'shed' | 'handshake-timeout';

export interface ConnectionGateOptions {
  /** Connections open at once (the port's cap). */
  readonly maxConnections: number;
  /** Connections one source address may hold. */
  readonly maxPerSource: number;
  /** From accepting a connection to the end of its TLS handshake. */
  readonly handshakeTimeoutMs: number;
  /** Called for every connection the gate closes, with why. */
  readonly onRefused?: (reason: RefusalReason) => void;
}

interface Entry {
  readonly socket: Socket;
  readonly source: string;
  /** `address|port` of the peer, to find the entry again from its TLS socket. */
  readonly peer: string;
  timer: NodeJS.Timeout | undefined;
}

/** The source of a connection: its address, IPv4 clients of a dual-stack socket as IPv4. */
export function sourceOf(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export class ConnectionGate {
  readonly #options: ConnectionGateOptions;
  readonly #entries = new Map<Socket, Entry>();
  /** Entries still in their handshake, oldest first (a Set keeps insertion order). */
  readonly #handshaking = new Set<Entry>();
  readonly #byPeer = new Map<string, Entry>();
  readonly #bySource = new Map<string, number>();

  constructor(options: ConnectionGateOptions) {
    this.#options = options;
  }

  /** Connections open now. */
  get open(): number {
    return this.#entries.size;
  }

  /** Connections `source` holds now. */
  heldBy(source: string): number {
    return this.#bySource.get(source) ?? 0;
  }

  /**
   * Gates `server`'s connections. Its own `maxConnections` must be above the gate's cap: Node drops
   * a connection over its limit before the gate could make room for it.
   */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.#admit(socket));
    server.on('secureConnection', (socket: TLSSocket) => this.#secured(socket));
  }

  /** Closes every connection still open (after the server stopped accepting). */
  closeAll(): void {
    for (const entry of [...this.#entries.values()]) entry.socket.destroy();
  }

  /** Closes the connections still in their TLS handshake: they carry no review to finish. */
  closeHandshaking(): void {
    for (const entry of [...this.#handshaking]) entry.socket.destroy();
  }

  #admit(socket: Socket): void {
    const source = sourceOf(socket.remoteAddress);
    const options = this.#options;
    if (this.heldBy(source) >= options.maxPerSource && !this.#shed((e) => e.source === source)) {
      this.#refuse(socket, 'per-source');
      return;
    }
    if (this.#entries.size >= options.maxConnections && !this.#shed(() => true)) {
      this.#refuse(socket, 'capacity');
      return;
    }
    const entry: Entry = {
      socket,
      source,
      peer: `${socket.remoteAddress}|${socket.remotePort}`,
      timer: undefined,
    };
    entry.timer = setTimeout(() => {
      if (!this.#handshaking.has(entry)) return;
      options.onRefused?.('handshake-timeout');
      socket.destroy();
    }, options.handshakeTimeoutMs);
    entry.timer.unref();
    this.#entries.set(socket, entry);
    this.#handshaking.add(entry);
    this.#byPeer.set(entry.peer, entry);
    this.#bySource.set(source, this.heldBy(source) + 1);
    socket.once('close', () => this.#release(entry));
  }

  #secured(tlsSocket: TLSSocket): void {
    const entry = this.#byPeer.get(`${tlsSocket.remoteAddress}|${tlsSocket.remotePort}`);
    if (entry === undefined) return;
    this.#handshaking.delete(entry);
    clearTimeout(entry.timer);
  }

  /** Closes the oldest connection in its handshake that `matches`; false when there is none. */
  #shed(matches: (entry: Entry) => boolean): boolean {
    for (const entry of this.#handshaking) {
      if (!matches(entry)) continue;
      this.#options.onRefused?.('shed');
      // Released now, not at its 'close': the room is needed for the connection being admitted.
      this.#release(entry);
      entry.socket.destroy();
      return true;
    }
    return false;
  }

  #refuse(socket: Socket, reason: RefusalReason): void {
    this.#options.onRefused?.(reason);
    socket.destroy();
  }

  #release(entry: Entry): void {
    if (this.#entries.get(entry.socket) !== entry) return;
    clearTimeout(entry.timer);
    this.#entries.delete(entry.socket);
    this.#handshaking.delete(entry);
    this.#byPeer.delete(entry.peer);
    const held = this.heldBy(entry.source) - 1;
    if (held > 0) this.#bySource.set(entry.source, held);
    else this.#bySource.delete(entry.source);
  }
}
