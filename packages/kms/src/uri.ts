// cosign's KMS key URIs, parsed the way sigstore's KMS providers parse them (same forms, same
// defaults), so a policy that works with cosign names the same key here.

export type KmsKeyRef =
  | {
      readonly provider: 'aws';
      /** `host:port` of a KMS endpoint (called over https), when the URI names one. */
      readonly endpoint: string | undefined;
      /** Key ID, alias name, key ARN or alias ARN. */
      readonly keyId: string;
      /** From the ARN, when the key is named by one. */
      readonly region: string | undefined;
    }
  | {
      readonly provider: 'gcp';
      /** `projects/P/locations/L/keyRings/R/cryptoKeys/K`. */
      readonly cryptoKey: string;
      /** The version, or `undefined` for the newest enabled one. */
      readonly version: string | undefined;
    }
  | {
      readonly provider: 'azure';
      /** `https://<vault host>/`. */
      readonly vaultUrl: string;
      readonly keyName: string;
      /** `undefined` for the current version. */
      readonly version: string | undefined;
    }
  | { readonly provider: 'hashivault'; readonly keyName: string };

export class KmsUriError extends Error {
  override readonly name = 'KmsUriError';
}

const AWS_UUID = 'm?r?k?-?[A-Fa-f0-9]{8}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{12}';
const AWS_ARN = 'arn:(?:aws|aws-us-gov|aws-cn):kms:([a-z0-9-]+):\\d{12}:';
const AWS_FORMS = [
  new RegExp(`^awskms://([^/]*)/(${AWS_UUID})$`),
  new RegExp(`^awskms://([^/]*)/(${AWS_ARN}key/${AWS_UUID})$`),
  /^awskms:\/\/([^/]*)\/(alias\/.*)$/,
  new RegExp(`^awskms://([^/]*)/(${AWS_ARN}alias/.*)$`),
];
const GCP =
  /^gcpkms:\/\/(projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+)(?:\/(?:cryptoKeyVersions|versions)\/([^/]+))?$/;
const AZURE = /^azurekms:\/\/([^/]+)\/([^/]+)(\/[a-z0-9]*)?$/;
const VAULT = /^hashivault:\/\/(\w(?:[\w.-]*\w)?)$/;

/** Parses a cosign KMS URI. Throws {@link KmsUriError} naming the expected form. */
export function parseKmsUri(uri: string): KmsKeyRef {
  if (uri.startsWith('awskms://')) return parseAws(uri);
  if (uri.startsWith('gcpkms://')) {
    const match = GCP.exec(uri);
    if (match === null)
      throw formError(uri, 'gcpkms://projects/P/locations/L/keyRings/R/cryptoKeys/K[/cryptoKeyVersions/V]');
    return { provider: 'gcp', cryptoKey: String(match[1]), version: match[2] };
  }
  if (uri.startsWith('azurekms://')) {
    const match = AZURE.exec(uri);
    if (match === null) throw formError(uri, 'azurekms://VAULT_HOST/KEY_NAME[/VERSION]');
    const version = match[3]?.slice(1);
    return {
      provider: 'azure',
      vaultUrl: `https://${match[1]}/`,
      keyName: String(match[2]),
      version: version === '' ? undefined : version,
    };
  }
  if (uri.startsWith('hashivault://')) {
    const match = VAULT.exec(uri);
    if (match === null) throw formError(uri, 'hashivault://KEY_NAME');
    return { provider: 'hashivault', keyName: String(match[1]) };
  }
  throw new KmsUriError(
    `KMS URI ${JSON.stringify(uri)} names no supported provider (awskms://, gcpkms://, azurekms://, hashivault://)`,
  );
}

function parseAws(uri: string): KmsKeyRef {
  for (const form of AWS_FORMS) {
    const match = form.exec(uri);
    if (match === null) continue;
    const endpoint = match[1] === '' ? undefined : match[1];
    return { provider: 'aws', endpoint, keyId: String(match[2]), region: match[3] };
  }
  throw formError(uri, 'awskms://[ENDPOINT]/[KEY_ID | alias/NAME | key ARN | alias ARN]');
}

function formError(uri: string, form: string): KmsUriError {
  return new KmsUriError(`KMS URI ${JSON.stringify(uri)} is not of the form ${form}`);
}
