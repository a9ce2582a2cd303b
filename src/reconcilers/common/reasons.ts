/**
 * The condition reasons the flow itself sets. Reasons a kind's driver reports live beside the
 * code that decides them; an AWS error code becomes a reason through {@link conditionReason}.
 */

/** Reasons the flow itself puts into conditions. */
export const FlowReason = {
  Available: "Available",
  Creating: "Creating",
  Deleting: "Deleting",
  ReconcileSuccess: "ReconcileSuccess",
} as const;

/** AWS codes contain dots (`InvalidAMIID.NotFound`); condition reasons may not. */
export function conditionReason(code: string): string {
  const r = code.replace(/[^A-Za-z0-9_,:]/g, "_").replace(/^[^A-Za-z]+/, "");
  return r.length > 0 ? r.slice(0, 1024) : "AwsError";
}
