/**
 * Spans of the backend side (issue 19, docs/tracing.md): a CLIENT span per backend call and an
 * INTERNAL root span per piece of background work (a watcher read, a readiness probe). Written against `@opentelemetry/api` only: without an SDK
 * registered (tracing off, the default) every call here is the API's no-op, and nothing is
 * injected into the backend's headers. The SDK is loaded by the server (server/tracing/).
 */
import {
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';

/** The instrumentation scope of every gateway span. */
export const TRACER_NAME = 'volume-gateway';

/** The API's proxy tracer: a no-op until an SDK registers, then the SDK's (it looks on every span). */
export const tracer = trace.getTracer(TRACER_NAME);

/**
 * Set in the context of background work, work no caller asked for (watcher reads, readiness
 * probes): the SDK samples such a trace by `OTEL_TRACES_BACKGROUND_SAMPLE_RATIO` (off by default),
 * not by the caller-facing sampler (server/tracing/sampler.ts).
 */
export const BACKGROUND_WORK = createContextKey('volume-gateway background work');

/** Attribute names the gateway adds beside the semantic conventions' own. */
export const GatewayAttr = {
  /** Configured backend id. */
  backend: 'gateway.backend.id',
  /** The endpoint as `gateway_backend_calls_total` labels it (`POST /volumes/:id/action os-extend`). */
  endpoint: 'gateway.backend.endpoint',
  /** The call was refused by the service's open circuit breaker (nothing was sent). */
  breakerRefused: 'gateway.breaker.refused',
  /** Gateway error code of a call that failed without an HTTP answer. */
  failure: 'gateway.failure',
  /** Volumes a watcher re-read reads. */
  watcherVolumes: 'gateway.watcher.volumes',
} as const;

/** One backend call as its span sees it. */
export interface ClientCall {
  backend: string;
  method: string;
  /** The endpoint template (`GET /v1/volume/csi/:id`): never the raw path, which names ids. */
  endpoint: string;
  /** The backend's origin. */
  url: URL;
}

/** A started CLIENT span and the headers that carry its context to the backend. */
export interface ClientSpan {
  /** The request's headers plus `traceparent` (and `tracestate`) when a propagator is registered. */
  headers: Record<string, string> | undefined;
  /** Ends the span with the answer's status, or with the gateway error code when none came; only the first call counts. */
  end(status: number, failure?: string, breakerRefused?: boolean): void;
}

/**
 * The route template of an endpoint: its path template, without the method and without a trailing
 * action word (`POST /volumes/:id/action os-extend` → `/volumes/:id/action`), so that every span
 * is named `{method} {url.template}`.
 */
function routeOf(endpoint: string, method: string): string {
  const path = endpoint.startsWith(`${method} `) ? endpoint.slice(method.length + 1) : endpoint;
  return path.split(' ', 1)[0]!;
}

/**
 * Starts the CLIENT span of one backend call, a child of the active span (the operation, or a
 * watcher read), and injects its context into a copy of `headers`.
 */
export function startClientSpan(call: ClientCall, headers: Record<string, string> | undefined): ClientSpan {
  const route = routeOf(call.endpoint, call.method);
  const span = tracer.startSpan(`${call.method} ${route}`, { kind: SpanKind.CLIENT });
  // Built only for a span that records: off, a call costs the no-op span and nothing more.
  if (span.isRecording()) {
    span.setAttributes({
      'http.request.method': call.method,
      'url.template': route,
      'server.address': call.url.hostname,
      'server.port': Number(call.url.port || (call.url.protocol === 'https:' ? 443 : 80)),
      [GatewayAttr.backend]: call.backend,
      // The metrics' `endpoint` label, with the action word the name leaves out.
      [GatewayAttr.endpoint]: call.endpoint,
    });
  }
  const carrier: Record<string, string> = {};
  // A span with a valid context is propagated also when not sampled (its flags say so); the API's no-op has none.
  if (isSpanContextValid(span.spanContext())) propagation.inject(trace.setSpan(context.active(), span), carrier);
  let ended = false;
  return {
    headers: Object.keys(carrier).length === 0 ? headers : { ...headers, ...carrier },
    end(status, failure, breakerRefused) {
      if (ended) return;
      ended = true;
      if (status > 0) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (breakerRefused) span.setAttribute(GatewayAttr.breakerRefused, true);
      if (failure !== undefined) {
        span.setAttributes({ 'error.type': failure, [GatewayAttr.failure]: failure });
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/**
 * Runs `run` as background work without a span of its own (a watcher's loop): the spans it starts
 * are sampled as background, and none is a child of whatever request happened to start it.
 */
export function inBackground<T>(run: () => T): T {
  return context.with(ROOT_CONTEXT.setValue(BACKGROUND_WORK, true), run);
}

/**
 * Runs one piece of background work (a watcher read, a readiness probe) in a root span of its own,
 * marked as background ({@link BACKGROUND_WORK}): a read nudged by a mutation must not become a
 * child of that request, and background traces are sampled apart. The backend calls it makes are
 * its children.
 */
export async function inBackgroundSpan<T>(name: string, attributes: Attributes, run: () => Promise<T>): Promise<T> {
  const background = ROOT_CONTEXT.setValue(BACKGROUND_WORK, true);
  const span: Span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, root: true, attributes }, background);
  try {
    return await context.with(trace.setSpan(background, span), run);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string') span.setAttribute('error.type', code);
    throw err;
  } finally {
    span.end();
  }
}
