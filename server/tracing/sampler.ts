/**
 * The gateway's sampler (docs/tracing.md, "Sampling"): traces of background work, work no caller
 * asked for (watcher reads, readiness probes: `BACKGROUND_WORK` in their context), are sampled at
 * their own ratio, `OTEL_TRACES_BACKGROUND_SAMPLE_RATIO`, 0 by default; every other span by the
 * sampler `OTEL_TRACES_SAMPLER` names, as the SDK would build it. Loaded with the SDK only.
 */
import { SpanKind, type Attributes, type Context, type Link } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-node';
import { BACKGROUND_WORK } from '../../adapters/http/tracing';
import type { SamplerSettings } from './settings';

/** The sampler `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name (the SDK's own set). */
function namedSampler(s: SamplerSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(s.ratio);
  switch (s.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/** Background traces at their own ratio (their spans follow their root), the rest by the named sampler. */
export class GatewaySampler implements Sampler {
  readonly #background: Sampler;
  readonly #callers: Sampler;

  constructor(callers: SamplerSettings, backgroundRatio: number) {
    this.#callers = namedSampler(callers);
    this.#background = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(backgroundRatio) });
  }

  shouldSample(
    ctx: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const sampler = ctx.getValue(BACKGROUND_WORK) === true ? this.#background : this.#callers;
    return sampler.shouldSample(ctx, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `GatewaySampler{callers=${this.#callers.toString()}, background=${this.#background.toString()}}`;
  }
}
