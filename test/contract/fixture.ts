/**
 * What a backend's contract fixture is (`adapters/<kind>/testing/contract-fixture.ts`, beside the
 * backend as gophercloud keeps `testing/` beside each resource), and what fixtures share: building
 * the backend as the server builds it, and the simulators' control API.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { VolumeSpec } from '../../adapters/contract/call-inputs';
import type { ProblemKind } from '../../adapters/contract/diagnosis';
import type { VolumeRef } from '../../adapters/contract/model';
import type { BackendEntry } from '../../server/config';
import { createRegistry } from '../../server/backends';

/** A backend under contract test, with callers, seeding and the simulator's controls. */
export interface ContractBackend {
  backend: VolumeBackend;
  /** The scope (namespace, project) the fixture's volumes live in. */
  scope: string;
  /** A caller that may read and change `scope`. */
  caller: CallOptions;
  /** A valid credential that may not read `scope`. */
  denied: CallOptions;
  /** A credential the backend does not know. */
  unknown: CallOptions;
  /** How the backend refuses, both allowed by the contract. */
  refuses: {
    /** `denied`'s reads of `scope`: a ForbiddenError, or hidden (empty lists, null reads) as OpenStack does for other projects. */
    denied: 'FORBIDDEN' | 'HIDDEN';
    /** The code of `unknown`'s calls (Nomad's CSI endpoints answer an unknown token like a lacking policy). */
    unknown: 'UNAUTHENTICATED' | 'FORBIDDEN';
  };
  /** Seeds `n` volumes in `scope` straight into the backend's store (not through the backend); their refs. */
  seed(n: number, prefix: string): Promise<VolumeRef[]>;
  /** A create specification in `scope` this backend accepts. */
  createSpec(name: string): VolumeSpec;
  /** A ref in `scope` that names no volume. */
  missing(): VolumeRef;
  /** Out-of-band changes, made through the simulator's HTTP control API (as another client would), or the memory backend's data file. */
  control: {
    /** Adds a volume named `name` in `scope`; its ref. */
    addVolume(name: string): Promise<VolumeRef>;
  };
  /**
   * The diagnosis cases (test/contract/diagnosis.test.ts), for a backend with the `diagnosis`
   * facet: its conditions made out of band, as a failure in the backend would leave them. The
   * fixture's backend settings make each kind's threshold small, so a made condition is past it.
   */
  diagnosis?: {
    /** The gateway's own credential (what the doctor reads with). */
    service: CallOptions;
    /** The kinds `make` can make: every kind the facet declares. */
    kinds: readonly ProblemKind[];
    /**
     * Makes `kind`'s condition on a new volume in `scope` (through the simulator's control API or
     * the memory backend's data file, never through the backend under test); the volume's ref.
     */
    make(kind: ProblemKind): Promise<VolumeRef>;
  };
  stop(): Promise<void>;
}

/** How to start one backend for the suite. */
export interface ContractFixture {
  /** Names the describe block. */
  name: string;
  start(): Promise<ContractBackend>;
}

/** The backend `config` builds, constructed as the server constructs it (`createRegistry`, as `server/backends.ts` does for the gateway). */
export function build(config: BackendEntry): VolumeBackend {
  return createRegistry([config]).all[0]!;
}

export const GiB = 2 ** 30;

/** POSTs a control request to a simulator's `/_sim/` API; the parsed answer. */
export async function control(baseUrl: string, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${new URL(baseUrl).origin}/_sim/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`control ${route} answered ${res.status}: ${text}`);
  return text === '' ? null : JSON.parse(text);
}
