/**
 * Whose an AWS resource is, for every kind alike. Ownership is what AWS says, never what the
 * object's status says: a resource is an object's own only when it carries that object's UID tag
 * (the S3 driver adds one narrow, evidence-based exception for the moment between CreateBucket
 * and its tag write; see ../s3-bucket/crash-window.ts). Everything else is foreign, and the flow
 * decides with {@link adoptionRefusal} whether the object may take it over:
 *
 * - tagged for another object that still exists (looked up in the shared cache): never;
 * - found only through an identifier recorded in status (EC2 instance ID): never, since status is
 *   writable by whoever may write the object's status;
 * - otherwise only with spec.adoptExisting, and then:
 *   - tagged by this operator for a gone object of the same namespace (deleted with Retain): yes,
 *     the namespace takes back what it left;
 *   - anything else (never tagged by this operator, or left by an object of another namespace):
 *     only when the cluster admin granted adoption to the object ({@link adoptionGrant}): the
 *     install for objects acting with the operator's own AWS identity (`--adoption`,
 *     `--adoption-namespaces`; none by default), the AwsAccount for the objects that use it
 *     (`spec.adoption: Allowed`; Disallowed by default).
 */
import {
  KIND_TAG,
  MANAGED_BY_TAG,
  MANAGED_BY_VALUE,
  NAME_TAG,
  NAMESPACE_TAG,
  UID_TAG,
  type TagMap,
} from "../../aws/ownership.ts";
import { AccountAdoption } from "../../api/v1/index.ts";
import { Reason } from "./reasons.ts";
import type { ManagedObject } from "./managed-object.ts";
import { uidOf } from "./owner.ts";

/** The object another resource's ownership tags name (any field may be missing on a hand-edited resource). */
export interface TaggedOwner {
  readonly uid: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly kind: string | undefined;
}

/** Why a resource found for an object is not that object's own. */
export interface ForeignClaim {
  /** The object the UID tag names, when the resource carries another object's UID. */
  readonly owner: TaggedOwner | undefined;
  /** The resource carries this operator's managed-by tag: it was created or adopted by it once. */
  readonly managedByOperator: boolean;
  /**
   * Whether the object may adopt the resource at all. False for a resource found only through an
   * identifier recorded in status, which proves nothing about ownership.
   */
  readonly adoptable: boolean;
}

/** The verdict on one resource, spread into a driver's observation. */
export type Verdict = { ownership: "owned" } | { ownership: "foreign"; foreign: ForeignClaim };

/** The owner named by `tags` when they carry a UID tag, else undefined. */
export function taggedOwner(tags: Readonly<TagMap>): TaggedOwner | undefined {
  const uid = tags[UID_TAG];
  if (uid === undefined || uid === "") return undefined;
  return { uid, namespace: tags[NAMESPACE_TAG], name: tags[NAME_TAG], kind: tags[KIND_TAG] };
}

/**
 * The verdict on a resource with `tags` for `obj`: owned when the UID tag is the object's UID,
 * or when the tags carry no UID and `untaggedIsOwn` says the driver has proof that this object
 * created it moments ago. Foreign otherwise; `adoptable: false` marks a resource the object may
 * never take over (see {@link ForeignClaim.adoptable}).
 */
export function verdictOf(
  tags: Readonly<TagMap>,
  obj: Pick<ManagedObject, "metadata">,
  opts: { untaggedIsOwn?: boolean; adoptable?: boolean } = {},
): Verdict {
  const owner = taggedOwner(tags);
  if (owner?.uid === uidOf(obj)) return { ownership: "owned" };
  if (owner === undefined && opts.untaggedIsOwn === true) return { ownership: "owned" };
  return {
    ownership: "foreign",
    foreign: {
      owner,
      managedByOperator: tags[MANAGED_BY_TAG] === MANAGED_BY_VALUE,
      adoptable: opts.adoptable ?? true,
    },
  };
}

/** Whether `tags` make the resource the object's own: the one test delete paths use. */
export function isOwnedBy(tags: Readonly<TagMap>, obj: Pick<ManagedObject, "metadata">): boolean {
  return taggedOwner(tags)?.uid === uidOf(obj);
}

/**
 * Whether the object a resource's tags name still exists: `live` when the cache holds an object
 * of that kind, namespace and name with that UID; `gone` when it does not; `unknown` when this
 * operator cannot tell (a kind it does not manage, a namespace it does not watch, tags without a
 * namespace or name). Callers treat `unknown` like `live`: never take what may be someone's.
 */
export type OwnerLiveness = "live" | "gone" | "unknown";

/** Looks owners up in the shared cache. */
export interface OwnerDirectory {
  liveness(owner: TaggedOwner): OwnerLiveness;
}

/** Values of `--adoption`: whether objects acting with the operator's own identity may adopt. */
export const ADOPTION_POLICIES = ["enabled", "disabled"] as const;
/** One of {@link ADOPTION_POLICIES}. */
export type AdoptionPolicy = (typeof ADOPTION_POLICIES)[number];

/**
 * The install's grant of adoption (`--adoption`, `--adoption-namespaces`), for the objects that
 * act with the operator's own AWS identity; an AwsAccount grants it for its own objects.
 */
export interface InstallAdoption {
  /** `enabled`: objects of every namespace may adopt; `disabled`: only those of {@link namespaces}. */
  readonly policy: AdoptionPolicy;
  /** The namespaces whose objects may adopt while the policy is `disabled`. */
  readonly namespaces: readonly string[];
}

/** The install's default: no object acting with the operator's own identity may adopt. */
export const NO_ADOPTION: InstallAdoption = Object.freeze({
  policy: "disabled",
  namespaces: Object.freeze([]),
});

/** One value of an AwsAccount's `spec.adoption`. */
export type AccountAdoptionPolicy = (typeof AccountAdoption)[keyof typeof AccountAdoption];

/** The identity an object acts with, as far as adoption cares: its AwsAccount, when it uses one. */
export interface AdoptionIdentity {
  /** The AwsAccount's name; undefined for the operator's own identity. */
  readonly name: string | undefined;
  /** The AwsAccount's spec.adoption; undefined for the operator's own identity. */
  readonly adoption?: AccountAdoptionPolicy | undefined;
}

/** Whether an object may adopt; when not, the right it lacks and who grants it, as a sentence. */
export type AdoptionGrant =
  { readonly granted: true } | { readonly granted: false; readonly missing: string };

/**
 * Whether objects of `namespace` acting with `identity` (undefined: the operator's own) may adopt
 * what they did not leave themselves: an AwsAccount decides for its objects (spec.adoption), the
 * install for the others (`--adoption=enabled`, or the namespace in `--adoption-namespaces`).
 */
export function adoptionGrant(
  namespace: string,
  identity: AdoptionIdentity | undefined,
  install: InstallAdoption,
): AdoptionGrant {
  const account = identity?.name;
  if (account !== undefined) {
    if (identity?.adoption === AccountAdoption.Allowed) return { granted: true };
    return {
      granted: false,
      missing:
        `AwsAccount ${account}, which this object uses, does not allow adoption; the cluster admin ` +
        `grants it with spec.adoption: Allowed on that AwsAccount`,
    };
  }
  if (install.policy === "enabled" || install.namespaces.includes(namespace)) return { granted: true };
  return {
    granted: false,
    missing:
      `objects of namespace ${namespace} that act with the operator's own AWS identity may not adopt; ` +
      `the cluster admin grants it with --adoption=enabled (every namespace) or ` +
      `--adoption-namespaces=${namespace} (chart values controller.adoption, controller.adoptionNamespaces)`,
  };
}

/** A refusal to take a resource over: a terminal condition reason and its message. */
export interface Refusal {
  readonly reason: string;
  readonly message: string;
}

/**
 * Why `obj` may not adopt the foreign resource described by `claim`, or undefined when it may
 * (it asked with spec.adoptExisting and every rule allows it). `noun` names the resource in
 * messages ("bucket", "queue", "instance"); `grant` is {@link adoptionGrant} for the object.
 */
export function adoptionRefusal(
  obj: ManagedObject,
  claim: ForeignClaim,
  ctx: { noun: string; directory: OwnerDirectory; grant: AdoptionGrant },
): Refusal | undefined {
  const { noun } = ctx;
  const owner = claim.owner;
  if (owner !== undefined) {
    const liveness = ctx.directory.liveness(owner);
    if (liveness !== "gone") {
      const who =
        owner.namespace !== undefined && owner.name !== undefined
          ? `${owner.kind ?? "object"} ${owner.namespace}/${owner.name}`
          : `the object with UID ${owner.uid}`;
      const why =
        liveness === "live"
          ? "it is never taken from an object that still exists"
          : "this operator cannot see that object, so it is treated as existing";
      return {
        reason: Reason.OwnedByAnotherObject,
        message: `the ${noun} in AWS belongs to ${who}; ${why}`,
      };
    }
  }
  if (!claim.adoptable) {
    return {
      reason: Reason.NotOwned,
      message:
        `the ${noun} recorded in status does not carry this object's ownership tags; ` +
        `the operator does not manage it and will not adopt it through a recorded ID`,
    };
  }
  if (!obj.spec.adoptExisting) {
    return {
      reason: Reason.NotOwned,
      message: `the ${noun} exists in AWS but is not owned by this object; set spec.adoptExisting to true to adopt it`,
    };
  }
  const namespace = obj.metadata.namespace ?? "";
  // What a gone object of this namespace left (deletionPolicy Retain) is the namespace's to take back.
  if (owner !== undefined && owner.namespace === namespace) return undefined;
  if (ctx.grant.granted) return undefined;
  const origin =
    owner !== undefined
      ? `was left by ${owner.kind ?? "object"} ${owner.namespace ?? "?"}/${owner.name ?? "?"} of another namespace`
      : claim.managedByOperator
        ? "carries no owner's UID tag"
        : "was never managed by this operator";
  return {
    reason: Reason.AdoptionNotAllowed,
    message:
      `the ${noun} exists in AWS and ${origin}; adopting it is a right the cluster admin grants: ` +
      `${ctx.grant.missing}. Nothing was written to AWS`,
  };
}
