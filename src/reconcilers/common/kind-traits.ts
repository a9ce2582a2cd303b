/**
 * What is fixed about a managed kind, declared as data in its registry entry (`defineKind`), not
 * asked of a live driver: the flow, the metrics and `kubeprovisioner plan` read it before a
 * driver exists, and a kind's driver reads its own.
 */
import type { ManagedObject } from "./managed-object.ts";

/** The static facts of a kind whose objects are `T`. */
export interface KindTraits<T extends ManagedObject> {
  /** What the resource is called in messages: "instance", "bucket", "queue". */
  readonly noun: string;
  /**
   * The status field holding the resource's AWS identifier (instance ID, bucket ARN, queue URL).
   * A recorded identifier with no resource in AWS means the resource was deleted out of band.
   */
  readonly idField: keyof NonNullable<T["status"]> & string;
  /**
   * Put the steady-state polls of every object on one grid (the multiples of the poll period),
   * so that observations the driver batches (EC2 DescribeInstances) arrive together and share
   * calls. Without it each object polls one period after its own last reconcile, which spreads
   * polls over the period and leaves nothing to batch. The first aligned poll comes between half
   * a period and one and a half periods after the reconcile; every later one exactly a period
   * apart. Polls of resources in transition are never aligned. @default false
   */
  readonly alignPolls?: boolean;
  /**
   * Every setting a change of the driver's plan may belong to, named as in the spec (`tags`,
   * `versioning`, ...): the complete, fixed value set of the drift metrics' `setting` label for
   * this kind.
   */
  readonly driftSettings: readonly string[];
  /**
   * Every setting whose changes the driver's plan may refuse because it is not changed in place
   * (an EC2 volume's size): the fixed `setting` label values of
   * `kubeprovisioner_drift_reports_total` for this kind. @default none
   */
  readonly reportedSettings?: readonly string[];
  /** The status fields the driver's `observed` may set beside the tags. @default none */
  readonly observedFields?: readonly (keyof NonNullable<T["status"]> & string)[];
}
