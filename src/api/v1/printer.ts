/**
 * Printer columns and labels shared by the CRDs of this group.
 */
import type { PrinterColumn } from "../schema/crd.ts";

/**
 * Ready (status of the Ready condition) and Age, shown by `kubectl get`, then the Ready reason
 * in `-o wide`.
 */
export const readyColumns: readonly PrinterColumn[] = [
  {
    name: "Ready",
    type: "string",
    jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    description: "Status of the Ready condition",
  },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: "Time since creation" },
  {
    name: "Reason",
    type: "string",
    jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
    description: "Reason of the Ready condition",
    priority: 1,
  },
];

/** The region, in `-o wide`. */
export const regionColumn: PrinterColumn = {
  name: "Region",
  type: "string",
  jsonPath: ".spec.region",
  description: "AWS region",
  priority: 1,
};

/** Labels on the CRD objects themselves. */
export const standardLabels: Readonly<Record<string, string>> = Object.freeze({
  "app.kubernetes.io/name": "kubeprovisioner",
  "app.kubernetes.io/part-of": "kubeprovisioner",
});

/** The management policy (Full or ObserveOnly), in `-o wide`. */
export const managementPolicyColumn: PrinterColumn = {
  name: "Policy",
  type: "string",
  jsonPath: ".spec.managementPolicy",
  description: "Management policy: Full or ObserveOnly",
  priority: 1,
};
