/**
 * The live path's spans (docs/tracing.md): a root span per event delivery, linked to the trace of
 * the gateway mutation that caused the change when one did. A change carries its cause as a W3C
 * `traceparent` string (`ChangeInput.cause`: plain data, so a shared log can carry it). Without
 * an SDK there is no active span, no cause is recorded and every span is the API's no-op.
 */
import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Link } from '@opentelemetry/api';
import { GatewayAttr, tracer } from '../../adapters/http/tracing';
import type { ChangeEvent } from '../events';

/** The active span as a `traceparent` (a mutation's span, when a mutation calls); undefined when none. */
export function activeTraceparent(): string | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & TraceFlags.SAMPLED}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function linkTo(traceparent: string | undefined): Link[] {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return [];
  return [
    {
      context: { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true },
      attributes: { 'gateway.link': 'cause' },
    },
  ];
}

/**
 * Runs one event's delivery to `subscribers` live subscribers in a root span of its own (sampled
 * by the root sampler, `OTEL_TRACES_SAMPLER`), linked to its cause. The span ends once every slot
 * `deliver` returns has settled (access checks and the group executions are its children).
 */
export function inDeliverySpan(e: ChangeEvent, subscribers: number, deliver: () => ReadonlyArray<unknown>): void {
  const span = tracer.startSpan(
    `deliver ${e.type}`,
    {
      kind: SpanKind.PRODUCER,
      root: true,
      links: linkTo(e.cause),
      attributes: {
        [GatewayAttr.backend]: e.backend,
        'gateway.event.type': e.type,
        'gateway.subscribers': subscribers,
      },
    },
    ROOT_CONTEXT,
  );
  if (!span.isRecording()) {
    deliver();
    return;
  }
  const slots = context.with(trace.setSpan(ROOT_CONTEXT, span), deliver);
  void Promise.allSettled(slots).then(() => span.end());
}
