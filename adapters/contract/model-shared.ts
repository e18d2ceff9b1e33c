/** Small value shapes the model's parts share (`model.ts`, `model-plugin.ts`): a leaf, so they import it and not each other. */

/** A string pair (metadata, parameters, topology segments). */
export interface KeyValue {
  key: string;
  value: string;
}

/** A topology segment set, e.g. `{ key: "topology.ebs.csi.aws.com/zone", value: "us-east-1a" }`. */
export interface Topology {
  segments: KeyValue[];
}

/** Healthy out of expected plugin instances. */
export interface HealthCount {
  healthy: number;
  expected: number;
}
