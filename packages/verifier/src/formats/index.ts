// The signature formats Signet reads, by name, as sigstore-js keeps its transparency-log entry
// kinds (`dsse`, `hashedrekord`, `intoto`) one file each behind one dispatch. Adding a format is
// a file beside these and a line in `SIGNATURE_FORMATS`; nothing else names a format.
import { bundleFormat } from './bundle.js';
import type { SignatureFormat } from './format.js';
import { legacyFormat } from './legacy.js';

export interface SignatureFormatsOptions {
  readonly formats: readonly SignatureFormat[];
  /** What an authority without `signatureFormat` reads. */
  readonly defaults: readonly string[];
}

/** A set of registered signature formats: what authorities may choose, and where hints look. */
export class SignatureFormats {
  readonly #byName: ReadonlyMap<string, SignatureFormat>;
  readonly #defaults: readonly SignatureFormat[];

  constructor(options: SignatureFormatsOptions) {
    if (options.defaults.length === 0) throw new TypeError('no default signature format');
    const byName = new Map<string, SignatureFormat>();
    for (const format of options.formats) {
      if (byName.has(format.name))
        throw new TypeError(`signature format ${JSON.stringify(format.name)} is registered twice`);
      byName.set(format.name, format);
    }
    this.#byName = byName;
    this.#defaults = options.defaults.map((name, index) => {
      if (options.defaults.indexOf(name) !== index)
        throw new TypeError(`default signature format ${JSON.stringify(name)} is named twice`);
      const format = byName.get(name);
      if (format === undefined)
        throw new TypeError(`default signature format ${JSON.stringify(name)} is not registered`);
      return format;
    });
  }

  /** The registered formats, in registration order. */
  get all(): readonly SignatureFormat[] {
    return [...this.#byName.values()];
  }

  /** What an authority reads: the format it names, or the defaults; `undefined` when `name` is not registered. */
  select(name: string | undefined): readonly SignatureFormat[] | undefined {
    if (name === undefined) return this.#defaults;
    const format = this.#byName.get(name);
    return format === undefined ? undefined : [format];
  }

  /** Every registered format but `chosen`: where to look for what an authority reading `chosen` misses. */
  others(chosen: readonly SignatureFormat[]): readonly SignatureFormat[] {
    return this.all.filter((format) => !chosen.includes(format));
  }

  /** The names of what an authority without `signatureFormat` reads, in the order it reads them. */
  get defaults(): readonly string[] {
    return this.#defaults.map((format) => format.name);
  }

  /** These formats and `format` (registered last), with the same defaults. */
  with(format: SignatureFormat): SignatureFormats {
    return new SignatureFormats({ formats: [...this.all, format], defaults: this.defaults });
  }

  /**
   * These formats, an authority without `signatureFormat` reading `defaults` (in that order):
   * `['legacy']` is policy-controller's exact behaviour (`signet serve --signature-format-default=legacy`).
   */
  withDefaults(defaults: readonly string[]): SignatureFormats {
    return new SignatureFormats({ formats: this.all, defaults });
  }
}

/**
 * cosign's legacy `.sig`/`.att` tags, and Sigstore bundle referrers. An authority without
 * `signatureFormat` reads both, the legacy tags first (a superset of policy-controller, which reads
 * only the legacy tags; `withDefaults(['legacy'])` for its exact behaviour).
 */
export const SIGNATURE_FORMATS = new SignatureFormats({
  formats: [legacyFormat, bundleFormat],
  defaults: ['legacy', 'bundle'],
});

export type { DiscoverySettings, Evidence, EvidenceNoun, FormatQuery, SignatureFormat } from './format.js';
