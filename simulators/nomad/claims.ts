/**
 * Nomad's volume claim rules (hashicorp/nomad nomad/structs/csi.go `Claim`, `claimRead`,
 * `claimWrite`, `claimRelease`, `ReadSchedulable`, `WriteSchedulable`, `HasFree*Claims`) and
 * the volume `Copy()` they operate on. Pure functions over a CSIVolume record.
 */
import type { CSITopology, CSIVolume, CSIVolumeClaim } from './model';
import { ClaimMode, ClaimState } from './model';

/** A claim that Nomad rejects; the message is Nomad's error text. */
export class ClaimError extends Error {
  override name = 'ClaimError';
}

const WRITER_MODES = new Set(['single-node-writer', 'multi-node-single-writer', 'multi-node-multi-writer']);

const cloneMap = <V>(m: Map<string, V> | null, f: (v: V) => V = (v) => v): Map<string, V> | null =>
  m === null ? null : new Map([...m].map(([k, v]) => [k, f(v)]));
const cloneTopology = (t: CSITopology | null): CSITopology | null =>
  t === null ? null : { Segments: cloneMap(t.Segments) };
const cloneTopologies = (l: Array<CSITopology | null> | null): Array<CSITopology | null> | null =>
  l === null ? null : l.map(cloneTopology);

/** A plain deep copy of a stored volume (nil stays nil). */
export function cloneVolume(v: CSIVolume): CSIVolume {
  return {
    ...v,
    RequestedTopologies: v.RequestedTopologies
      ? {
          Required: cloneTopologies(v.RequestedTopologies.Required),
          Preferred: cloneTopologies(v.RequestedTopologies.Preferred),
        }
      : null,
    Topologies: cloneTopologies(v.Topologies),
    MountOptions: v.MountOptions
      ? { FSType: v.MountOptions.FSType, MountFlags: v.MountOptions.MountFlags ? [...v.MountOptions.MountFlags] : null }
      : null,
    Secrets: cloneMap(v.Secrets),
    Parameters: cloneMap(v.Parameters),
    Context: cloneMap(v.Context),
    RequestedCapabilities: v.RequestedCapabilities ? v.RequestedCapabilities.map((c) => (c ? { ...c } : null)) : null,
    ReadAllocs: cloneMap(v.ReadAllocs),
    WriteAllocs: cloneMap(v.WriteAllocs),
    ReadClaims: cloneMap(v.ReadClaims, (c) => ({ ...c })),
    WriteClaims: cloneMap(v.WriteClaims, (c) => ({ ...c })),
    PastClaims: cloneMap(v.PastClaims, (c) => ({ ...c })),
  };
}

/**
 * `CSIVolume.Copy()`: a deep copy whose nil maps/slices are replaced by empty ones
 * (`newStructs()`), which is why copied volumes never show `null` Topologies/Parameters/Context.
 */
export function copyVolume(v: CSIVolume): CSIVolume {
  const out = cloneVolume(v);
  out.Topologies = out.Topologies ?? [];
  out.MountOptions = out.MountOptions ?? { FSType: '', MountFlags: null };
  out.Secrets = out.Secrets ?? new Map();
  out.Parameters = out.Parameters ?? new Map();
  out.Context = out.Context ?? new Map();
  out.ReadAllocs = out.ReadAllocs ?? new Map();
  out.WriteAllocs = out.WriteAllocs ?? new Map();
  out.ReadClaims = out.ReadClaims ?? new Map();
  out.WriteClaims = out.WriteClaims ?? new Map();
  out.PastClaims = out.PastClaims ?? new Map();
  return out;
}

export function readSchedulable(v: CSIVolume): boolean {
  return v.Schedulable && v.ResourceExhausted === null;
}

export function writeSchedulable(v: CSIVolume): boolean {
  if (!v.Schedulable) return false;
  if (WRITER_MODES.has(v.AccessMode)) return v.ResourceExhausted === null;
  if (v.AccessMode === '') {
    // Created but never claimed: judge by what the volume can do.
    for (const c of v.RequestedCapabilities ?? []) {
      if (c && WRITER_MODES.has(c.AccessMode)) return v.ResourceExhausted === null;
    }
  }
  return false;
}

export function hasFreeReadClaims(v: CSIVolume): boolean {
  switch (v.AccessMode) {
    case 'single-node-reader-only':
      return (v.ReadClaims?.size ?? 0) === 0;
    case 'single-node-writer':
      return (v.ReadClaims?.size ?? 0) === 0 && (v.WriteClaims?.size ?? 0) === 0;
    default:
      return true;
  }
}

export function hasFreeWriteClaims(v: CSIVolume): boolean {
  switch (v.AccessMode) {
    case 'single-node-writer':
    case 'multi-node-single-writer':
      return (v.WriteClaims?.size ?? 0) === 0;
    case 'multi-node-multi-writer':
    case '':
      return true;
    default:
      return false;
  }
}

/** `InUse()`: any key in ReadAllocs or WriteAllocs. */
export function inUse(v: CSIVolume): boolean {
  return (v.ReadAllocs?.size ?? 0) > 0 || (v.WriteAllocs?.size ?? 0) > 0;
}

function setModesFromClaim(v: CSIVolume, c: CSIVolumeClaim): void {
  if (v.AttachmentMode === '') v.AttachmentMode = c.AttachmentMode;
  if (v.AccessMode === '') v.AccessMode = c.AccessMode;
}

/**
 * `CSIVolume.Claim(claim, alloc)` on a copied volume (maps non-nil). `allocExists` stands for
 * the alloc pointer lookup. Throws ClaimError with Nomad's message.
 */
export function applyClaim(v: CSIVolume, c: CSIVolumeClaim, allocExists: boolean): void {
  const read = v.ReadAllocs!;
  const write = v.WriteAllocs!;
  const rc = v.ReadClaims!;
  const wc = v.WriteClaims!;
  const pc = v.PastClaims!;
  if ((v.RequestedCapabilities?.length ?? 0) === 0 && v.AccessMode !== '' && v.AttachmentMode !== '') {
    v.RequestedCapabilities = [{ AccessMode: v.AccessMode, AttachmentMode: v.AttachmentMode }];
  }
  if (v.AttachmentMode !== '' && c.AttachmentMode !== '' && v.AttachmentMode !== c.AttachmentMode) {
    throw new ClaimError('cannot change attachment mode of claimed volume');
  }
  if (c.State === ClaimState.Taken && c.Mode === ClaimMode.Read) {
    if (read.has(c.AllocationID)) return;
    if (!allocExists) throw new ClaimError(`allocation missing: ${c.AllocationID}`);
    if (!readSchedulable(v)) throw new ClaimError('volume is currently unschedulable');
    if (!hasFreeReadClaims(v)) throw new ClaimError('volume max claims reached');
    read.set(c.AllocationID, null);
    write.delete(c.AllocationID);
    rc.set(c.AllocationID, c);
    wc.delete(c.AllocationID);
    pc.delete(c.AllocationID);
    setModesFromClaim(v, c);
    return;
  }
  if (c.State === ClaimState.Taken && c.Mode === ClaimMode.Write) {
    if (write.has(c.AllocationID)) return;
    if (!allocExists) throw new ClaimError(`allocation missing: ${c.AllocationID}`);
    if (!writeSchedulable(v)) throw new ClaimError('volume is currently unschedulable');
    if (!hasFreeWriteClaims(v)) throw new ClaimError('volume max claims reached');
    write.set(c.AllocationID, null);
    read.delete(c.AllocationID);
    wc.set(c.AllocationID, c);
    rc.delete(c.AllocationID);
    pc.delete(c.AllocationID);
    setModesFromClaim(v, c);
    return;
  }
  // GC claims and unpublish checkpoints.
  if (c.State === ClaimState.ReadyToFree) {
    read.delete(c.AllocationID);
    write.delete(c.AllocationID);
    rc.delete(c.AllocationID);
    wc.delete(c.AllocationID);
    pc.delete(c.AllocationID);
    if (rc.size === 0 && wc.size === 0 && pc.size === 0) {
      v.AccessMode = '';
      v.AttachmentMode = '';
    }
  } else {
    pc.set(c.AllocationID, c);
  }
}
