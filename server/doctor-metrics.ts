/**
 * The volume doctor's metrics: open problems by backend and kind, and what its passes cost. Across
 * replicas only the replica that watches a backend exports that backend's problems, so a sum over
 * replicas counts each problem once.
 */
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { PassStats, VolumeDoctor } from '../subscriptions/doctor';

export class DoctorMetrics {
  readonly #doctor: { current?: VolumeDoctor } = {};
  readonly problems: Gauge<'backend' | 'kind'>;
  readonly passSeconds: Histogram<'backend' | 'phase'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const doctor = this.#doctor;
    const problems = new Gauge({
      name: 'gateway_volume_problems',
      help: "Open volume problems by backend and kind, exported by the replica that watches the backend (sums across replicas count each once); every kind a backend's checks can find is present, 0 when none.",
      labelNames: ['backend', 'kind'] as const,
      registers,
      collect: () => {
        problems.reset();
        for (const c of doctor.current?.counts() ?? []) problems.set({ backend: c.backend, kind: c.kind }, c.count);
      },
    });
    this.problems = problems;
    this.passSeconds = new Histogram({
      name: 'gateway_doctor_pass_seconds',
      help: "Time of the volume doctor's full passes: `checks` the checks over the whole view (CPU), `facts` the extra backend reads they need.",
      labelNames: ['backend', 'phase'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
      registers,
    });
  }

  /** Reads open problems from `doctor` at scrape time. */
  watch(doctor: VolumeDoctor): void {
    this.#doctor.current = doctor;
  }

  /** One full pass ended. */
  pass(backend: string, s: PassStats): void {
    this.passSeconds.observe({ backend, phase: 'checks' }, s.checkMs / 1000);
    if (s.factsMs > 0) this.passSeconds.observe({ backend, phase: 'facts' }, s.factsMs / 1000);
  }
}
