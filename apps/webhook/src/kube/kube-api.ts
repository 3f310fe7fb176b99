// One connection to a cluster: client-node's generated API clients for the groups Signet reads and
// writes, all authenticated by one KubeConfig (its informers take that KubeConfig too). Loaded only when Signet talks to a
// cluster (ADR 0018): client-node's KubeConfig pulls its whole generated API.
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  AppsV1Api,
  BatchV1Api,
  type ConfigurationOptions,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { type KubeAccessOptions, loadKubeConfig } from './kube-config.js';
import { kubeApiError } from './kube-errors.js';

export type { KubeAccessOptions } from './kube-config.js';

export class KubeApi {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;
  readonly customObjects: CustomObjectsApi;
  readonly admissionRegistration: AdmissionregistrationV1Api;
  readonly apiExtensions: ApiextensionsV1Api;
  readonly apps: AppsV1Api;
  readonly batch: BatchV1Api;

  constructor(config: KubeConfig) {
    this.config = config;
    this.core = withKubeErrors(config.makeApiClient(CoreV1Api));
    this.coordination = withKubeErrors(config.makeApiClient(CoordinationV1Api));
    this.customObjects = withKubeErrors(config.makeApiClient(CustomObjectsApi));
    this.admissionRegistration = withKubeErrors(config.makeApiClient(AdmissionregistrationV1Api));
    this.apiExtensions = withKubeErrors(config.makeApiClient(ApiextensionsV1Api));
    this.apps = withKubeErrors(config.makeApiClient(AppsV1Api));
    this.batch = withKubeErrors(config.makeApiClient(BatchV1Api));
  }

  /**
   * Per-call options that abort the call after `ms` (the answer's body included): every call Signet
   * makes has a deadline. A method, so that callers need client-node only as types.
   */
  deadline(ms: number): ConfigurationOptions {
    // The generated APIs' per-call middleware is of their Observable kind (a promise wrapper).
    const timeout: ObservableMiddleware = {
      pre: (context) => {
        context.setSignal(AbortSignal.timeout(ms));
        return new Observable(Promise.resolve(context));
      },
      post: (response) => new Observable(Promise.resolve(response)),
    };
    return { middleware: [timeout], middlewareMergeStrategy: 'append' };
  }
}

/**
 * A generated client whose calls fail with a KubeApiError naming the call and saying in one line
 * what the API server answered (client-node's ApiException message carries the body and every
 * response header).
 */
function withKubeErrors<T extends object>(client: T): T {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw kubeApiError(property, error);
            })
          : result;
      };
    },
  });
}

/** The cluster `options` name (kubectl's order when they name none). Throws InputError. */
export function openKubeApi(options: KubeAccessOptions = {}): KubeApi {
  return new KubeApi(loadKubeConfig(options).config);
}
