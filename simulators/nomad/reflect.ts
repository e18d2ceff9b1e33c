/**
 * A `reflect` view of the stored `structs.CSIVolume`, which is what Nomad hands to go-bexpr
 * (hashicorp/nomad nomad/csi_endpoint.go `List`: the filter sees the full stored struct with Go
 * field names — including Secrets, Parameters, Context and the claim maps — not the stub that is
 * returned).
 */
import type { GoVal } from './bexpr';
import type {
  CSIMountOptions,
  CSITopology,
  CSITopologyRequest,
  CSIVolume,
  CSIVolumeCapability,
  CSIVolumeClaim,
} from './model';

const str = (v: string, type = 'string'): GoVal => ({ kind: 'string', type, v });
const int = (v: bigint | number, type: 'int' | 'int64'): GoVal => ({ kind: 'int', type, rk: type, v: BigInt(v) });
const uint64 = (v: number): GoVal => ({ kind: 'uint', type: 'uint64', rk: 'uint64', v: BigInt(v) });
const bool = (v: boolean): GoVal => ({ kind: 'bool', type: 'bool', v });

function stringMap(m: Map<string, string> | null, type = 'map[string]string'): GoVal {
  return { kind: 'map', type, entries: m === null ? null : [...m.entries()].map(([k, v]) => [k, str(v)]) };
}

function ptr(type: string, elem: GoVal | null): GoVal {
  return { kind: 'ptr', type, elem };
}

function topology(t: CSITopology | null): GoVal {
  return ptr(
    '*structs.CSITopology',
    t === null ? null : { kind: 'struct', type: 'structs.CSITopology', fields: [['Segments', stringMap(t.Segments)]] },
  );
}

function topologyList(list: Array<CSITopology | null> | null): GoVal {
  return {
    kind: 'slice',
    type: '[]*structs.CSITopology',
    elemType: 'structs.CSITopology',
    elemKind: 'struct',
    items: list === null ? null : list.map(topology),
  };
}

function topologyRequest(r: CSITopologyRequest | null): GoVal {
  return ptr(
    '*structs.CSITopologyRequest',
    r === null
      ? null
      : {
          kind: 'struct',
          type: 'structs.CSITopologyRequest',
          fields: [
            ['Required', topologyList(r.Required)],
            ['Preferred', topologyList(r.Preferred)],
          ],
        },
  );
}

function mountOptions(m: CSIMountOptions | null): GoVal {
  return ptr(
    '*structs.CSIMountOptions',
    m === null
      ? null
      : {
          kind: 'struct',
          type: 'structs.CSIMountOptions',
          fields: [
            ['FSType', str(m.FSType)],
            [
              'MountFlags',
              {
                kind: 'slice',
                type: '[]string',
                elemType: 'string',
                elemKind: 'string',
                items: m.MountFlags === null ? null : m.MountFlags.map((f) => str(f)),
              },
            ],
          ],
        },
  );
}

function capabilities(list: Array<CSIVolumeCapability | null> | null): GoVal {
  return {
    kind: 'slice',
    type: '[]*structs.CSIVolumeCapability',
    elemType: 'structs.CSIVolumeCapability',
    elemKind: 'struct',
    items:
      list === null
        ? null
        : list.map((c) =>
            ptr(
              '*structs.CSIVolumeCapability',
              c === null
                ? null
                : {
                    kind: 'struct',
                    type: 'structs.CSIVolumeCapability',
                    fields: [
                      ['AttachmentMode', str(c.AttachmentMode, 'structs.CSIVolumeAttachmentMode')],
                      ['AccessMode', str(c.AccessMode, 'structs.CSIVolumeAccessMode')],
                    ],
                  },
            ),
          ),
  };
}

function allocMap(m: Map<string, null> | null): GoVal {
  return {
    kind: 'map',
    type: 'map[string]*structs.Allocation',
    // Stored volumes never hold the alloc pointers (they are nil until denormalised).
    entries: m === null ? null : [...m.keys()].map((k) => [k, ptr('*structs.Allocation', null)]),
  };
}

function claim(c: CSIVolumeClaim): GoVal {
  return ptr('*structs.CSIVolumeClaim', {
    kind: 'struct',
    type: 'structs.CSIVolumeClaim',
    fields: [
      ['AllocationID', str(c.AllocationID)],
      ['NodeID', str(c.NodeID)],
      ['ExternalNodeID', str(c.ExternalNodeID)],
      ['Mode', int(c.Mode, 'int')],
      ['AccessMode', str(c.AccessMode, 'structs.CSIVolumeAccessMode')],
      ['AttachmentMode', str(c.AttachmentMode, 'structs.CSIVolumeAttachmentMode')],
      ['State', int(c.State, 'int')],
    ],
  });
}

function claimMap(m: Map<string, CSIVolumeClaim> | null): GoVal {
  return {
    kind: 'map',
    type: 'map[string]*structs.CSIVolumeClaim',
    entries: m === null ? null : [...m.entries()].map(([k, c]) => [k, claim(c)]),
  };
}

/** The stored volume as go-bexpr's reflection sees it. */
export function volumeGoVal(v: CSIVolume): GoVal {
  return {
    kind: 'struct',
    type: 'structs.CSIVolume',
    fields: [
      ['ID', str(v.ID)],
      ['Name', str(v.Name)],
      ['ExternalID', str(v.ExternalID)],
      ['Namespace', str(v.Namespace)],
      ['RequestedTopologies', topologyRequest(v.RequestedTopologies)],
      ['Topologies', topologyList(v.Topologies)],
      ['AccessMode', str(v.AccessMode, 'structs.CSIVolumeAccessMode')],
      ['AttachmentMode', str(v.AttachmentMode, 'structs.CSIVolumeAttachmentMode')],
      ['MountOptions', mountOptions(v.MountOptions)],
      ['Secrets', stringMap(v.Secrets, 'structs.CSISecrets')],
      ['Parameters', stringMap(v.Parameters)],
      ['Context', stringMap(v.Context)],
      ['Capacity', int(v.Capacity, 'int64')],
      ['RequestedCapacityMin', int(v.RequestedCapacityMin, 'int64')],
      ['RequestedCapacityMax', int(v.RequestedCapacityMax, 'int64')],
      ['RequestedCapabilities', capabilities(v.RequestedCapabilities)],
      ['CloneID', str(v.CloneID)],
      ['SnapshotID', str(v.SnapshotID)],
      ['ReadAllocs', allocMap(v.ReadAllocs)],
      ['WriteAllocs', allocMap(v.WriteAllocs)],
      ['ReadClaims', claimMap(v.ReadClaims)],
      ['WriteClaims', claimMap(v.WriteClaims)],
      ['PastClaims', claimMap(v.PastClaims)],
      ['Schedulable', bool(v.Schedulable)],
      ['PluginID', str(v.PluginID)],
      ['Provider', str(v.Provider)],
      ['ProviderVersion', str(v.ProviderVersion)],
      ['ControllerRequired', bool(v.ControllerRequired)],
      ['ControllersHealthy', int(v.ControllersHealthy, 'int')],
      ['ControllersExpected', int(v.ControllersExpected, 'int')],
      ['NodesHealthy', int(v.NodesHealthy, 'int')],
      ['NodesExpected', int(v.NodesExpected, 'int')],
      // time.Time: a struct whose fields are all unexported, so only the value itself is reachable.
      ['ResourceExhausted', { kind: 'struct', type: 'time.Time', fields: [] }],
      ['CreateIndex', uint64(v.CreateIndex)],
      ['ModifyIndex', uint64(v.ModifyIndex)],
      ['CreateTime', int(v.CreateTime, 'int64')],
      ['ModifyTime', int(v.ModifyTime, 'int64')],
    ],
  };
}
