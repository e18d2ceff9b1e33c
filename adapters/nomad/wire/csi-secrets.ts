/**
 * The `X-Nomad-CSI-Secrets` header, shared by the volume and snapshot calls that pass CSI
 * secrets to the plugin (delete, snapshot list/create/delete; create/register store them).
 */
import { BadUserInputError } from '../../contract/errors';
import { headerText } from '../../contract/input';
import type { KeyValue } from '../../contract/model';

/**
 * Checks CSI secrets for `X-Nomad-CSI-Secrets: k1=v1,k2=v2` (backends.md 1.4.6). Nomad splits the
 * header on `,`, then each pair on its first `=`, and silently drops pairs without one; a later
 * duplicate key wins. So an empty key, a key with `,` or `=`, a value with `,` or a repeated key
 * would smuggle in another secret or lose one: refused, naming e.g. `input.secrets[0].key`,
 * never echoing the secret. Keys and values must also be header text (printable Latin-1).
 */
export function checkCsiSecrets(secrets: readonly KeyValue[] | undefined, argument: string): KeyValue[] {
  const seen = new Set<string>();
  return (secrets ?? []).map((s, i) => {
    const key = headerText(s.key, `${argument}[${i}].key`);
    const value = headerText(s.value, `${argument}[${i}].value`);
    if (key === '' || /[=,]/.test(key)) throw new BadUserInputError(`${argument}[${i}].key must be non-empty and hold no "=" or ",": Nomad splits X-Nomad-CSI-Secrets on them`, `${argument}[${i}].key`);
    if (value.includes(',')) throw new BadUserInputError(`${argument}[${i}].value must hold no ",": Nomad splits X-Nomad-CSI-Secrets on it`, `${argument}[${i}].value`);
    if (seen.has(key)) throw new BadUserInputError(`${argument}[${i}].key repeats an earlier key`, `${argument}[${i}].key`);
    seen.add(key);
    return { key, value };
  });
}

/** The `X-Nomad-CSI-Secrets` header; `secrets` passed {@link checkCsiSecrets}. */
export function secretsHeader(secrets: KeyValue[]): Record<string, string> {
  return secrets.length === 0 ? {} : { 'x-nomad-csi-secrets': secrets.map((s) => `${s.key}=${s.value}`).join(',') };
}
