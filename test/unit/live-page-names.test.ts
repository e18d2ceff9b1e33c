/** The live page's consumer names: events carry no Nova server name, so the page fills names in (server/live/page/state.ts). */
import { parse, validate } from 'graphql';
import { VOLUME_QUERY } from '../../server/live/page/queries';
import {
  consumerLabel,
  lacksNames,
  LiveTable,
  type LiveAttachment,
  type LiveEvent,
  type LiveVolume,
} from '../../server/live/page/state';
import { buildGatewaySchema } from '../../server/schema';

const server = (id: string, name: string | null) => ({ __typename: 'VolumeServerConsumer', serverId: id, name });
const vol = (over: Partial<LiveVolume> = {}): LiveVolume => ({
  id: 'v1',
  backend: { id: 'openstack' },
  namespace: 'p',
  nativeId: 'n1',
  name: 'scratch',
  status: 'AVAILABLE',
  attachments: [],
  ...over,
});
const event = (over: Partial<LiveEvent>): LiveEvent => ({
  type: 'ATTACHED',
  cursor: 'c',
  observedAt: '2025-01-01T00:00:00Z',
  volumeId: 'v1',
  volume: null,
  previousStatus: null,
  attachment: null,
  changedFields: [],
  omittedBackends: [],
  ...over,
});

describe('live page consumer names', () => {
  it('should validate its one-volume re-read against the gateway schema', () => {
    expect(validate(buildGatewaySchema(), parse(VOLUME_QUERY)).map((e) => e.message)).toEqual([]);
  });

  it('should flag an event attachment without its server name, and fill the name from a re-read without touching states', () => {
    const t = new LiveTable();
    t.replace([vol()]);
    const bare: LiveAttachment = { id: 'a1', state: 'ATTACHED', consumer: server('s9', null) };
    t.apply(event({ volume: vol({ status: 'IN_USE', attachments: [bare] }), attachment: bare }), 10);
    expect(lacksNames(t.get('v1')!.volume)).toBe(true);
    // While the name loads: a placeholder, never the bare server id.
    expect(consumerLabel(t.get('v1')!.volume.attachments![0]!.consumer)).toBe('server …');
    // The re-read was sent before a later event; its (older) state must not win, only its names.
    const read = vol({
      status: 'IN_USE',
      attachments: [{ id: 'a1', state: 'ATTACHING', consumer: server('s9', 'batch-1') }],
    });
    expect(t.fillNames(read)).toBe(true);
    const row = t.get('v1')!;
    expect(row).toMatchObject({
      changedAt: 10,
      lastEvent: 'ATTACHED',
      volume: { attachments: [{ id: 'a1', state: 'ATTACHED' }] },
    });
    expect(consumerLabel(row.volume.attachments![0]!.consumer)).toBe('server batch-1');
    expect(lacksNames(row.volume)).toBe(false);
    expect(t.fillNames(read)).toBe(false);
  });

  it('should show the server id only once an HTTP read answered without a name, and stop re-reading it', () => {
    const t = new LiveTable();
    // A list (HTTP) that could not name the server: nothing to wait for.
    t.replace([vol({ attachments: [{ id: 'a0', state: 'ATTACHED', consumer: server('s0', null) }] })]);
    expect(lacksNames(t.get('v1')!.volume)).toBe(false);
    expect(consumerLabel(t.get('v1')!.volume.attachments![0]!.consumer)).toBe('server s0');
    // An event's unnamed server waits for the re-read; a re-read without its name ends the wait.
    const bare: LiveAttachment = { id: 'a1', state: 'ATTACHED', consumer: server('s9', null) };
    t.apply(event({ volume: vol({ status: 'IN_USE', attachments: [bare] }), attachment: bare }), 10);
    expect(consumerLabel(t.get('v1')!.volume.attachments![0]!.consumer)).toBe('server …');
    expect(t.fillNames(vol({ attachments: [bare] }))).toBe(true);
    expect(consumerLabel(t.get('v1')!.volume.attachments![0]!.consumer)).toBe('server s9');
    expect(lacksNames(t.get('v1')!.volume)).toBe(false);
  });

  it("should show the namespace name the list gave for the caller's own namespace, and ids for the others", () => {
    const t = new LiveTable();
    t.replace(
      [vol(), vol({ id: 'v2', namespace: 'q' })],
      [
        { id: 'openstack', callerNamespace: { id: 'p', name: 'demo' } },
        { id: 'east', callerNamespace: null },
      ],
    );
    expect(t.namespaceLabel(t.get('v1')!.volume)).toBe('demo');
    expect(t.namespaceLabel(t.get('v2')!.volume)).toBe('q');
    expect(t.namespaceLabel({ backend: { id: 'east' }, namespace: 'p' })).toBe('p');
    // A fresh list under other credentials forgets it.
    t.replace([vol()]);
    expect(t.namespaceLabel(t.get('v1')!.volume)).toBe('p');
  });

  it('should name consumers from names already seen in the list, so no re-read is needed', () => {
    const t = new LiveTable();
    t.replace([
      vol({ id: 'v0', nativeId: 'n0', attachments: [{ id: 'a0', state: 'ATTACHED', consumer: server('s1', 'db-1') }] }),
      vol(),
    ]);
    const bare: LiveAttachment = { id: 'a1', state: 'ATTACHING', consumer: server('s1', null) };
    t.apply(event({ type: 'ATTACHING', volume: vol(), attachment: bare }), 1);
    expect(lacksNames(t.get('v1')!.volume)).toBe(false);
    expect(consumerLabel(t.get('v1')!.volume.attachments![0]!.consumer)).toBe('server db-1');
  });

  it('should forget names on a fresh list (other credentials may not see those servers), and ignore re-reads of unknown rows', () => {
    const t = new LiveTable();
    t.replace([
      vol({ id: 'v0', nativeId: 'n0', attachments: [{ id: 'a0', state: 'ATTACHED', consumer: server('s1', 'db-1') }] }),
    ]);
    t.replace([vol()]);
    const bare: LiveAttachment = { id: 'a1', state: 'ATTACHED', consumer: server('s1', null) };
    t.apply(event({ volume: vol({ attachments: [bare] }), attachment: bare }), 1);
    expect(lacksNames(t.get('v1')!.volume)).toBe(true);
    expect(
      t.fillNames(vol({ id: 'gone', attachments: [{ id: 'x', state: 'ATTACHED', consumer: server('s1', 'db-1') }] })),
    ).toBe(false);
    // Allocation and host consumers never need a re-read.
    expect(
      lacksNames(
        vol({
          attachments: [{ id: 'h', state: 'ATTACHED', consumer: { __typename: 'VolumeHostConsumer', hostName: null } }],
        }),
      ),
    ).toBe(false);
    expect(lacksNames(vol({ attachments: null }))).toBe(false);
  });
});
