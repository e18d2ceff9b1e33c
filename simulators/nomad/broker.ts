/**
 * The event broker behind `/v1/event/stream` (hashicorp/nomad nomad/stream/event_broker.go,
 * event_buffer.go). Every raft apply that changes CSI tables publishes one buffer item
 * `{Index, Events}`. The buffer is bounded: once more than `size` items were appended the
 * oldest is dropped (Nomad's `event_buffer_size`, default 100).
 *
 * Subscribing with `index=0` starts at the head of the buffer (so everything still buffered is
 * replayed); `index=N` starts at the item with that index, else the first one after it, else
 * the newest item — exactly `eventBuffer.StartAtClosest`.
 */
import type { GoJSON } from './encode';
import { encodeGo } from './encode';

/** `structs.Event`. */
export interface SimEvent {
  Topic: string;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  Payload: GoJSON;
}

/** A published buffer item; `json` holds each event pre-encoded (payloads are snapshots). */
export interface BufferItem {
  seq: number;
  Index: number;
  events: Array<{ event: SimEvent; json: string }>;
}

export interface Subscription {
  /** Stops delivery. */
  close(): void;
}

export class EventBroker {
  private items: BufferItem[] = [{ seq: 0, Index: 0, events: [] }];
  private seq = 0;
  private count = 0;
  private readonly subs = new Set<{ next: number; deliver: (item: BufferItem) => void }>();

  constructor(private readonly size: number) {}

  /** Appends one raft index worth of events and delivers it to subscribers. */
  publish(index: number, events: SimEvent[]): void {
    if (events.length === 0) return;
    const item: BufferItem = {
      seq: ++this.seq,
      Index: index,
      events: events.map((event) => ({ event, json: encodeGo(eventWire(event)) })),
    };
    this.items.push(item);
    this.count++;
    if (this.count > this.size) {
      this.items.shift();
      this.count--;
    }
    for (const sub of this.subs) {
      if (sub.next <= item.seq) {
        sub.next = item.seq + 1;
        sub.deliver(item);
      }
    }
  }

  /**
   * Starts a subscription. Buffered items from the start point are delivered synchronously,
   * then every new item as it is published.
   */
  subscribe(index: number, deliver: (item: BufferItem) => void): Subscription {
    const start = this.startAtClosest(index);
    const sub = { next: start.seq, deliver };
    for (const item of this.items) {
      if (item.seq >= sub.next) {
        sub.next = item.seq + 1;
        deliver(item);
      }
    }
    this.subs.add(sub);
    return { close: () => this.subs.delete(sub) };
  }

  private startAtClosest(index: number): BufferItem {
    const head = this.items[0]!;
    if (index === 0 || index <= head.Index) return head;
    let prev = head;
    for (const item of this.items.slice(1)) {
      if (index <= item.Index) return item;
      prev = item;
    }
    return prev;
  }

  /** Number of subscribers (for tests/diagnostics). */
  get subscriberCount(): number {
    return this.subs.size;
  }
}

/** `structs.Event` on the wire. */
export function eventWire(e: SimEvent): { [k: string]: GoJSON } {
  return {
    Topic: e.Topic,
    Type: e.Type,
    Key: e.Key,
    Namespace: e.Namespace,
    FilterKeys: e.FilterKeys,
    Index: e.Index,
    Payload: e.Payload,
  };
}
