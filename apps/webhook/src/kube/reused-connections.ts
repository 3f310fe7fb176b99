// client-node 2.0.1 builds a new undici dispatcher for every call of a generated client (and every
// watch): each call paid a new TLS context and a new TCP and TLS connection to the API server, and
// each Lease renewal two. This KubeConfig lets client-node compute each call's credentials as
// always, then hands the call one long-lived dispatcher for as long as the TLS material stays the
// same, so calls reuse kept-alive connections.

import { createHash } from 'node:crypto';
import type { RequestOptions } from 'node:https';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class ConnectionReusingKubeConfig extends KubeConfig {
  #reused: { readonly key: string; readonly dispatcher: Dispatcher } | undefined;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    // Headers (tokens, exec plugins, OIDC) and a new dispatcher carrying this call's TLS material.
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    // No dispatcher: no TLS material of its own, so undici's global one, which keeps connections.
    if (fresh === undefined) return;
    const key = await this.#tlsKey();
    if (this.#reused?.key === key) {
      context.setDispatcher(this.#reused.dispatcher);
      // `fresh` never connected: it holds no socket and needs no closing.
      return;
    }
    // The TLS material changed (a rotated client certificate): new calls take a dispatcher made
    // with it; the old one closes once the calls it carries (watches included) have ended.
    const old = this.#reused;
    this.#reused = { key, dispatcher: fresh };
    old?.dispatcher.close().catch(() => undefined);
  }

  /**
   * What the dispatcher client-node made depends on: the server, the proxy, and the TLS options as
   * client-node computes them for this call (CA, client certificate and key, possibly from an exec
   * plugin; server name; verification). Hashed: the key material is not kept in a string.
   */
  async #tlsKey(): Promise<string> {
    const tls: RequestOptions = {};
    // Public, and what client-node's own calls use: the same credentials, without a request.
    await this.applyToHTTPSOptions(tls);
    const cluster = this.getCurrentCluster();
    const hash = createHash('sha256');
    for (const part of [
      cluster?.server,
      cluster?.proxyUrl,
      tls.servername,
      String(tls.rejectUnauthorized),
      tls.ca,
      tls.cert,
      tls.key,
      tls.pfx,
      tls.passphrase,
    ]) {
      // client-node gives strings and Buffers (PEM), single or in arrays.
      for (const item of Array.isArray(part) ? part : [part])
        hash.update(item === undefined ? '' : String(item));
      hash.update('\0');
    }
    return hash.digest('hex');
  }
}
