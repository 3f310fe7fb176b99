// RFC 8288 `Link` headers, as the referrers API uses them for pagination:
// `</v2/app/referrers/sha256:...?n=10&last=abc>; rel="next"`.
import { RegistryError, type RegistryErrorContext } from './errors.js';

const LINK_VALUE = /<([^>]*)>((?:\s*;\s*[^;,]*)*)/g;
const REL_PARAM = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i;

/** The `rel="next"` target, resolved against `base`; `undefined` when there is none. */
export function nextLink(header: string | null, base: URL, context: RegistryErrorContext): URL | undefined {
  for (const [, target = '', params = ''] of (header ?? '').matchAll(LINK_VALUE)) {
    const rel = REL_PARAM.exec(params);
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (!relations.includes('next')) continue;
    try {
      return new URL(target, base);
    } catch (error) {
      throw new RegistryError('MALFORMED', context, 'the Link header has an invalid next URL', {
        cause: error,
      });
    }
  }
  return undefined;
}
