/**
 * What nova-api and nova-compute do to Cinder on attach, detach and swap (openstack/nova
 * nova/compute/api.py and nova/compute/manager.py; the nova-26 recordings and timings): attach
 * creates the Cinder attachment (`reserved`) and the BDM during the API call; after `attachMs` the
 * compute host updates it with its connector (`attaching`), after `attachCompleteMs` completes it
 * (`attached`, volume `in-use`). Detach calls os-begin_detaching synchronously; after `detachMs`
 * the attachment is deleted and the BDM destroyed. A failed connect (injected) leaves the
 * attachment `error_attaching` plus Cinder's UPDATE_ATTACHMENT message, then Nova's rollback
 * deletes the attachment and the BDM. With a caller (`who`), each records its instance action once
 * the API has reserved what it needs, and its event (`compute_attach_volume` …) starts when the API
 * answers and finishes when the work is done, `Error` on an injected failure (nova-26/05–06).
 */
import { nowMicros } from '../clock';
import {
  completeAttachment,
  connectAttachment,
  removeAttachment,
  reserveAttachment,
  type Caller,
} from '../cinder/attach-core';
import { ApiError } from '../http/fault';
import { uuid } from '../ids';
import type { Bdm, Server, Volume } from '../model';
import type { SimState } from '../state';
import type { ActionCaller, ActionEventHandle, EventFailure } from './instance-actions';
import { ATTACH_FAILURE, DETACH_FAILURE } from './tracebacks';

/** `block_device.match_device`. */
export const DEVICE_RE = /^(\/dev\/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$/;

/** The compute host's connector as os-brick builds it. */
function connector(state: SimState, device: string | null): Record<string, unknown> {
  return {
    platform: 'x86_64',
    os_type: 'linux',
    ip: '127.0.0.1',
    host: state.opts.computeHost,
    multipath: false,
    initiator: 'iqn.1993-08.org.debian:01:openstack-sim',
    do_local_attach: false,
    mountpoint: device,
  };
}

/** reserve_block_device_name: the requested device if free, else the next free `<prefix>b…`. */
export function reserveDevice(s: Server, requested: string | null): string {
  const used = new Set(s.bdms.map((b) => b.deviceName));
  if (requested !== null) {
    if (!DEVICE_RE.test(requested)) throw new ApiError(400, `The supplied device path (${requested}) is invalid.`);
    if (used.has(requested)) throw new ApiError(409, `The supplied device path (${requested}) is in use.`);
    return requested;
  }
  for (let i = 1; i < 26 * 27; i++) {
    const letters =
      i < 26
        ? String.fromCharCode(97 + i)
        : String.fromCharCode(96 + Math.floor(i / 26)) + String.fromCharCode(97 + (i % 26));
    const dev = `${s.devicePrefix}${letters}`;
    if (!used.has(dev)) return dev;
  }
  throw new ApiError(
    403,
    'The maximum allowed number of disk devices (26) to attach to a single instance has been exceeded.',
  );
}

/** A Cinder error as nova's cinderclient wrapper reports it (`translate_cinder_exception`). */
export function viaCinder<T>(requestId: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 400)
      throw new ApiError(400, `Invalid input received: ${e.message} (HTTP 400) (Request-ID: ${requestId})`);
    throw e;
  }
}

function bdmAlive(s: Server, b: Bdm): boolean {
  return s.bdms.includes(b);
}

function dropBdm(s: Server, b: Bdm): void {
  s.bdms = s.bdms.filter((x) => x !== b);
  s.updatedAt = nowMicros();
}

/** Records the action (when there is a caller) and starts its one event on the compute host. */
function startAction(
  state: SimState,
  s: Server,
  action: string,
  event: string,
  who: ActionCaller | undefined,
): ActionEventHandle | undefined {
  if (who === undefined) return undefined;
  return state.instanceActions.startEvent(state.instanceActions.start(s, action, who), event, state.opts.computeHost);
}

function finishEvent(state: SimState, h: ActionEventHandle | undefined, failure?: EventFailure): void {
  if (h) state.instanceActions.finishEvent(h, failure);
}

export interface AttachRequest {
  device: string | null;
  tag: string | null;
  deleteOnTermination: boolean;
}

/** nova-api's part (synchronous): BDM + Cinder attachment; then schedules the compute part. */
export function attachVolume(
  state: SimState,
  s: Server,
  v: Volume,
  r: AttachRequest,
  caller: Caller,
  who?: ActionCaller,
): Bdm {
  const device = reserveDevice(s, r.device);
  const a = viaCinder(caller.requestId, () => reserveAttachment(state, v, s.id));
  const b: Bdm = {
    uuid: uuid(),
    volumeId: v.id,
    attachmentId: a.id,
    deviceName: device,
    tag: r.tag,
    deleteOnTermination: r.deleteOnTermination,
    bootIndex: null,
    createdAt: nowMicros(),
  };
  s.bdms.push(b);
  s.updatedAt = nowMicros();
  if (s.vmState === 'shelved_offloaded') {
    // No host to connect to: nova-api completes the attachment without a connector (event `api_…`).
    const ev = startAction(state, s, 'attach_volume', 'api_attach_volume', who);
    completeAttachment(state, v, a);
    finishEvent(state, ev);
    return b;
  }
  const ev = startAction(state, s, 'attach_volume', 'compute_attach_volume', who);
  const failure = state.faults.takeAttach(v.id);
  state.timers.after(state.delays.attachMs, () => {
    if (!bdmAlive(s, b) || !v.attachments.includes(a)) return;
    try {
      connectAttachment(
        state,
        v,
        a,
        connector(state, device),
        { isService: true, requestId: caller.requestId },
        failure !== undefined,
      );
    } catch {
      if (failure?.rollback !== false) {
        state.timers.after(state.delays.attachRollbackMs, () => {
          if (v.attachments.includes(a)) removeAttachment(state, v, a);
          dropBdm(s, b);
          finishEvent(state, ev, ATTACH_FAILURE);
        });
      }
      return; // without rollback nova-compute died mid-way: the event never finishes
    }
    state.timers.after(state.delays.attachCompleteMs, () => {
      if (bdmAlive(s, b) && v.attachments.includes(a) && a.attachStatus === 'attaching') {
        completeAttachment(state, v, a);
        finishEvent(state, ev);
      }
    });
  });
  return b;
}

/**
 * The compute part of a detach (after begin_detaching): delete the attachment, destroy the BDM.
 * An injected failure (`failNextDetach`) does what nova-26/06 recorded: Cinder's attachment is
 * deleted (volume `available`), then `_detach_volume` raises before the BDM is destroyed, so Nova
 * keeps listing the attachment and the event ends `Error`.
 */
export function scheduleDetach(state: SimState, s: Server, b: Bdm, v: Volume, who?: ActionCaller): void {
  const shelved = s.vmState === 'shelved_offloaded';
  const ev = startAction(state, s, 'detach_volume', shelved ? 'api_detach_volume' : 'compute_detach_volume', who);
  if (state.faults.takeDetach(v.id)) return; // stuck: the volume stays `detaching`, the BDM stays, the event runs on
  const fails = !shelved && state.faults.takeDetachFailure(v.id);
  const run = (): void => {
    const a = v.attachments.find((x) => x.id === b.attachmentId);
    if (a) removeAttachment(state, v, a);
    if (fails) {
      finishEvent(state, ev, DETACH_FAILURE);
      return;
    }
    dropBdm(s, b);
    finishEvent(state, ev);
  };
  if (shelved) run();
  else state.timers.after(state.delays.detachMs, run);
}

/** swap_volume's compute part: the new volume takes the BDM's device, the old one is detached. */
export function scheduleSwap(
  state: SimState,
  s: Server,
  b: Bdm,
  oldV: Volume,
  newV: Volume,
  caller: Caller,
  who?: ActionCaller,
): void {
  const newA = viaCinder(caller.requestId, () => reserveAttachment(state, newV, s.id));
  const ev = startAction(state, s, 'swap_volume', 'compute_swap_volume', who);
  state.timers.after(state.delays.attachMs, () => {
    if (!bdmAlive(s, b) || !newV.attachments.includes(newA)) return;
    connectAttachment(
      state,
      newV,
      newA,
      connector(state, b.deviceName),
      { isService: true, requestId: caller.requestId },
      false,
    );
    completeAttachment(state, newV, newA);
    const oldA = oldV.attachments.find((x) => x.id === b.attachmentId);
    if (oldA) removeAttachment(state, oldV, oldA);
    b.volumeId = newV.id;
    b.attachmentId = newA.id;
    s.updatedAt = nowMicros();
    finishEvent(state, ev);
  });
}
