/**
 * Injected failures that take effect inside the simulated services (the ones that act on the
 * HTTP layer — latency and unavailability — live in http/server.ts).
 */

/** How an injected attach failure ends. */
export interface AttachFailure {
  volumeId?: string;
  /**
   * true (default): as real Nova does after a failed connect — the `error_attaching` attachment is
   * deleted after `attachRollbackMs`, the volume goes back to `available` and the BDM disappears.
   * false: leave the attachment in `error_attaching` and the volume `reserved` (nova-compute died).
   */
  rollback: boolean;
}

type Targeted = { volumeId?: string };

export class FaultPlan {
  private readonly attach: AttachFailure[] = [];
  private readonly extend: Targeted[] = [];
  private readonly detach: Targeted[] = [];
  private readonly detachFail: Targeted[] = [];
  private readonly create: Array<{ name?: string }> = [];

  failNextAttach(f: AttachFailure): void {
    this.attach.push(f);
  }

  failNextExtend(volumeId?: string): void {
    this.extend.push(volumeId === undefined ? {} : { volumeId });
  }

  stickNextDetach(volumeId?: string): void {
    this.detach.push(volumeId === undefined ? {} : { volumeId });
  }

  /** The next compute-side detach fails after Cinder let go (nova-26/06). */
  failNextDetach(volumeId?: string): void {
    this.detachFail.push(volumeId === undefined ? {} : { volumeId });
  }

  failNextCreate(name?: string): void {
    this.create.push(name === undefined ? {} : { name });
  }

  takeAttach(volumeId: string): AttachFailure | undefined {
    return take(this.attach, (f) => f.volumeId === undefined || f.volumeId === volumeId);
  }

  takeExtend(volumeId: string): boolean {
    return take(this.extend, (f) => f.volumeId === undefined || f.volumeId === volumeId) !== undefined;
  }

  takeDetach(volumeId: string): boolean {
    return take(this.detach, (f) => f.volumeId === undefined || f.volumeId === volumeId) !== undefined;
  }

  takeDetachFailure(volumeId: string): boolean {
    return take(this.detachFail, (f) => f.volumeId === undefined || f.volumeId === volumeId) !== undefined;
  }

  takeCreate(name: string | null): boolean {
    return take(this.create, (f) => f.name === undefined || f.name === name) !== undefined;
  }

  clear(): void {
    this.attach.length = 0;
    this.extend.length = 0;
    this.detach.length = 0;
    this.detachFail.length = 0;
    this.create.length = 0;
  }
}

function take<T>(list: T[], match: (t: T) => boolean): T | undefined {
  const i = list.findIndex(match);
  if (i < 0) return undefined;
  return list.splice(i, 1)[0];
}
