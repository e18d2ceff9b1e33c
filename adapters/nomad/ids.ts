/**
 * What Nomad accepts in each identifier position (hashicorp/nomad at the commit docs/upstream.md names):
 * - namespace: `validNamespaceName` in nomad/structs/structs.go, `^[a-zA-Z0-9-]{1,128}$`
 *   (`*`, "all namespaces", is only for the list filter and never reaches these rules);
 * - volume and plugin ids: any non-empty string server-side (`CSIVolume.Validate` only checks
 *   presence), but the HTTP router takes them from the decoded path and splits on `/`
 *   (command/agent/csi_endpoint.go), and Go cleans `.`/`..` segments: the shared rules of
 *   `adapters/contract/input.ts` already exclude those;
 * - node ids: UUIDs on real clients, but the server checks only presence, so the shared rules.
 * Snapshot ids are the storage provider's and travel as query values: shared rules.
 */
import { defineIdentifierScheme, type IdentifierScheme } from '../contract/ids';

const NAMESPACE = /^[a-zA-Z0-9-]{1,128}$/;

/** Nomad's identifier scheme: namespaces by Nomad's rule; snapshots are scoped by plugin. */
export const NOMAD_IDENTIFIERS: IdentifierScheme = {
  rules: {
    namespace: { test: (v) => NAMESPACE.test(v), expects: 'a Nomad namespace: 1 to 128 letters, digits and "-"' },
  },
  snapshotScope: 'plugin',
};

defineIdentifierScheme('NOMAD', NOMAD_IDENTIFIERS);
