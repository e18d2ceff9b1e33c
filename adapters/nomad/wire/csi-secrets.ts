/**
 * The `X-Nomad-CSI-Secrets` header, shared by the volume and snapshot calls that pass CSI
 * secrets to the plugin (delete, snapshot list/create/delete; create/register store them).
 */
import { BadUserInputError, within, type InputPlace } from '../../contract/errors';
import { headerText } from '../../contract/input';
import type { KeyValue } from '../../contract/model';

/**
 * Checks CSI secrets for `X-Nomad-CSI-Secrets: k1=v1,k2=v2` (hashicorp/nomad
 * command/agent/csi_endpoint.go `parseCSISecrets`). Nomad splits the
 * header on `,`, then each pair on its first `=`, and silently drops pairs without one; a later
 * duplicate key wins. So an empty key, a key with `,` or `=`, a value with `,` or a repeated key
 * would smuggle in another secret or lose one: refused, naming e.g. `secrets[0].key`,
 * never echoing the secret. Keys and values must also be header text (printable Latin-1).
 */
export function checkCsiSecrets(secrets: readonly KeyValue[] | undefined, argument: InputPlace): KeyValue[] {
  const seen = new Set<string>();
  return (secrets ?? []).map((s, i) => {
    const keyAt = within(argument, `[${i}].key`);
    const valueAt = within(argument, `[${i}].value`);
    const key = headerText(s.key, keyAt);
    const value = headerText(s.value, valueAt);
    if (key === '' || /[=,]/.test(key))
      throw BadUserInputError.at(
        keyAt,
        (a) => `${a} must be non-empty and hold no "=" or ",": Nomad splits X-Nomad-CSI-Secrets on them`,
      );
    if (value.includes(','))
      throw BadUserInputError.at(valueAt, (a) => `${a} must hold no ",": Nomad splits X-Nomad-CSI-Secrets on it`);
    if (seen.has(key)) throw BadUserInputError.at(keyAt, (a) => `${a} repeats an earlier key`);
    seen.add(key);
    return { key, value };
  });
}

/** The `X-Nomad-CSI-Secrets` header; `secrets` passed {@link checkCsiSecrets}. */
export function secretsHeader(secrets: KeyValue[]): Record<string, string> {
  return secrets.length === 0 ? {} : { 'x-nomad-csi-secrets': secrets.map((s) => `${s.key}=${s.value}`).join(',') };
}
