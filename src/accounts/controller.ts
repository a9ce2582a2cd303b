/**
 * The AwsAccount controller. Per reconcile of an AwsAccount:
 *
 * - Being deleted: while managed objects still use it (they carry the flow's finalizer and
 *   resolve to it, by accountRef or namespace annotation), keep the account's finalizer and say
 *   which objects in the `InUse` condition: they need its credentials to delete their resources.
 *   Once none does, release it.
 * - Otherwise: add the finalizer, assume the role (./sessions.ts; cached credentials are reused
 *   until they near expiry) and ask GetCallerIdentity with them; record the account ID and the
 *   Ready condition (False with reason AssumeRoleFailed and the AWS code, or
 *   ExternalIdUnavailable), and look again after the check interval. A check that AWS refused
 *   (a terminal AWS error: the trust policy or the operator's policy denies AssumeRole, the
 *   operator has no credentials, STS refuses the session duration) is fixed in IAM, not in the
 *   AwsAccount, so it is tried again on the long access backoff of the managed objects (the check
 *   interval doubling to an hour, ../reconcilers/common/flow/key-state.ts), with what to fix in
 *   the message; a throttled or transient failure, or an unreadable external-ID Secret, is retried
 *   with the controller's backoff.
 *
 * The controller reconciles on a change of the account's generation (a spec edit, the start of a
 * deletion) and on its own periodic requeue; managed objects never trigger a check. While an
 * account is being deleted, a change of an object using it enqueues it.
 */
import { GetCallerIdentityCommand } from "@aws-sdk/client-sts";
import {
  ACCOUNT_FINALIZER,
  API_VERSION,
  AccountReason,
  ConditionType,
  FINALIZER,
  setCondition,
  type AwsAccount,
  type AwsAccountStatus,
  type Condition,
} from "../api/v1/index.ts";
import { AwsError } from "../aws/errors.ts";
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import { accessAdvice } from "../reconcilers/common/flow/failure.ts";
import { accessRetryCurve } from "../reconcilers/common/flow/key-state.ts";
import { KeyedLadder, type ExponentialCurve } from "../runtime/backoff.ts";
import type { Clock } from "../runtime/clock.ts";
import type { ResourceClient } from "../runtime/client/index.ts";
import { hasFinalizer } from "../runtime/client/finalizers.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller/reconciler.ts";
import type { EventRecorder } from "../runtime/events/recorder.ts";
import { isConflict } from "../runtime/kube/errors.ts";
import type { KubeObject } from "../runtime/kube/object.ts";
import { accountNameOf, type NamespaceObject } from "./resolver.ts";
import type { AccountSessions } from "./sessions.ts";

/** The managed objects of one kind, from the shared cache. */
export interface ManagedKindLister {
  readonly kind: string;
  list(): readonly Readonly<ManagedObject>[];
}

/** Options of {@link AwsAccountReconciler}. */
export interface AwsAccountReconcilerOptions {
  client: Pick<ResourceClient<AwsAccount>, "get" | "addFinalizer" | "removeFinalizer" | "updateStatus">;
  sessions: AccountSessions;
  /** Every managed kind's objects. */
  kinds: readonly ManagedKindLister[];
  namespaces: (name: string) => Readonly<NamespaceObject> | undefined;
  recorder: EventRecorder;
  clock: Clock;
  /** How often a Ready account is checked again, in ms. */
  checkIntervalMs: number;
}

/** How often a deleting account still in use looks again, besides the events of its users. */
const IN_USE_REQUEUE_MS = 30_000;
/** Objects named in the InUse condition; the rest are counted. */
const IN_USE_LISTED = 10;

/** See the module comment. */
export class AwsAccountReconciler implements Reconciler {
  readonly #o: AwsAccountReconcilerOptions;
  readonly #retryCurve: ExponentialCurve;
  /** Per account: the access-retry ladder of checks AWS refused (a check that ran early takes no step). */
  readonly #refused: KeyedLadder<string>;

  constructor(opts: AwsAccountReconcilerOptions) {
    this.#o = opts;
    this.#retryCurve = accessRetryCurve(opts.checkIntervalMs);
    this.#refused = new KeyedLadder(this.#retryCurve, () => opts.clock.now());
  }

  /** The objects (as `Kind namespace/name`) that use the account `name` and may hold AWS resources. */
  users(name: string): string[] {
    const out: string[] = [];
    for (const kind of this.#o.kinds) {
      for (const obj of kind.list()) {
        if (!hasFinalizer(obj, FINALIZER)) continue;
        if (accountNameOf(obj, this.#o.namespaces(obj.metadata.namespace ?? "")) !== name) continue;
        out.push(`${kind.kind} ${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`);
      }
    }
    return out.sort();
  }

  /** The key of the account `obj` resolves to while that account is being deleted: its check. */
  deletingAccountOf(obj: KubeObject & Pick<ManagedObject, "spec">): Request[] {
    const name = accountNameOf(obj, this.#o.namespaces(obj.metadata.namespace ?? ""));
    if (name === undefined) return [];
    const account = this.#o.client.get(name);
    return account?.metadata.deletionTimestamp !== undefined ? [{ name }] : [];
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const cached = this.#o.client.get(req);
    if (cached === undefined) {
      this.#o.sessions.forget(req.name);
      this.#refused.reset(req.name);
      return {};
    }
    let account = structuredClone(cached) as AwsAccount;
    try {
      if (account.metadata.deletionTimestamp !== undefined) return await this.#finalize(account, ctx);
      if (!hasFinalizer(account, ACCOUNT_FINALIZER)) {
        account = await this.#o.client.addFinalizer(account, ACCOUNT_FINALIZER, { signal: ctx.signal });
      }
      return await this.#check(account, ctx);
    } catch (err) {
      if (isConflict(err)) return { requeueAfter: 1000 };
      throw err;
    }
  }

  async #finalize(account: AwsAccount, ctx: ReconcileContext): Promise<Result> {
    if (!hasFinalizer(account, ACCOUNT_FINALIZER)) return {};
    const name = account.metadata.name ?? "";
    const users = this.users(name);
    if (users.length === 0) {
      await this.#o.client.removeFinalizer(account, ACCOUNT_FINALIZER, { signal: ctx.signal });
      this.#o.sessions.forget(name);
      this.#refused.reset(name);
      return {};
    }
    const listed = users.slice(0, IN_USE_LISTED).join(", ");
    const more = users.length > IN_USE_LISTED ? ` and ${users.length - IN_USE_LISTED} more` : "";
    const message = `still used by ${users.length} object${users.length > 1 ? "s" : ""}: ${listed}${more}; deletion waits until none uses the account`;
    const seen = account.status?.conditions?.find((c) => c.type === AccountReason.InUse);
    if (seen?.message !== message)
      this.#o.recorder.event(subject(account), "Normal", AccountReason.InUse, message);
    await this.#writeStatus(account, {
      conditions: [[AccountReason.InUse, "True", AccountReason.InUse, message]],
    });
    return { requeueAfter: IN_USE_REQUEUE_MS };
  }

  async #check(account: AwsAccount, ctx: ReconcileContext): Promise<Result> {
    const name = account.metadata.name ?? "";
    const entry = this.#o.sessions.entry(account);
    try {
      const out = await (
        await entry.aws.client("sts", this.#o.sessions.stsRegion)
      ).send(new GetCallerIdentityCommand({}), { abortSignal: ctx.signal });
      await this.#writeStatus(account, {
        accountId: out.Account,
        assumedArn: out.Arn,
        conditions: [
          [ConditionType.Ready, "True", AccountReason.RoleAssumed, `assumed ${account.spec.roleArn}`],
        ],
      });
      this.#refused.reset(name);
      return { requeueAfter: this.#o.checkIntervalMs };
    } catch (err) {
      const [reason, failure] = failureOf(err, account);
      const refused = refusalOf(err);
      const message =
        refused !== undefined
          ? `${failure}${accessAdvice(refused.info, { retry: this.#retryCurve })}`
          : failure;
      const was = account.status?.conditions?.find((c) => c.type === ConditionType.Ready);
      if (was?.reason !== reason || was.message !== message) {
        this.#o.recorder.event(subject(account), "Warning", reason, message);
      }
      await this.#writeStatus(account, { conditions: [[ConditionType.Ready, "False", reason, message]] });
      ctx.logger.info({ reason, message }, "AwsAccount is not ready");
      if (refused !== undefined) return { requeueAfter: this.#refused.next(name) };
      throw err;
    }
  }

  async #writeStatus(
    account: AwsAccount,
    set: {
      accountId?: string | undefined;
      assumedArn?: string | undefined;
      conditions: [type: string, status: Condition["status"], reason: string, message: string][];
    },
  ): Promise<void> {
    const generation = account.metadata.generation ?? 0;
    let conditions: Condition[] = [...(account.status?.conditions ?? [])];
    for (const [type, status, reason, message] of set.conditions) {
      conditions = setCondition(
        conditions,
        { type, status, reason, message, observedGeneration: generation },
        this.#o.clock.now(),
      );
    }
    const status: AwsAccountStatus = {
      ...(account.status ?? {}),
      observedGeneration: generation,
      conditions,
      ...(set.accountId !== undefined ? { accountId: set.accountId } : {}),
      ...(set.assumedArn !== undefined ? { assumedArn: set.assumedArn } : {}),
    };
    if (JSON.stringify(status) === JSON.stringify(account.status ?? {})) return;
    await this.#o.client.updateStatus({ ...account, status });
  }
}

/** `account` with its type meta, as Events name it. */
function subject(account: AwsAccount): AwsAccount & { apiVersion: string; kind: string } {
  return { ...account, apiVersion: API_VERSION, kind: "AwsAccount" };
}

/**
 * The Ready reason and message of a failed check. The AssumeRole failure arrives wrapped by the
 * GetCallerIdentity call whose credentials it was to provide: the innermost AWS error counts.
 */
export function failureOf(
  err: unknown,
  account: Pick<AwsAccount, "spec">,
): [reason: string, message: string] {
  const secret = causes(err).find((e) => e instanceof SecretUnavailableError);
  if (secret !== undefined) return [AccountReason.ExternalIdUnavailable, secret.message];
  const aws = innermostAwsError(err);
  if (aws !== undefined) {
    return [
      AccountReason.AssumeRoleFailed,
      `${aws.info.code}: could not assume ${account.spec.roleArn}: ${aws.info.operation}: ${aws.info.message}`,
    ];
  }
  return [AccountReason.AssumeRoleFailed, `could not assume ${account.spec.roleArn}: ${String(err)}`];
}

/** `err` and its causes, outermost first (at most 8 deep). */
function causes(err: unknown): Error[] {
  const out: Error[] = [];
  for (let e: unknown = err; e instanceof Error && out.length < 8; e = e.cause) out.push(e);
  return out;
}

/** The innermost AWS error of `err`'s cause chain: the AssumeRole failure inside the call it served. */
function innermostAwsError(err: unknown): AwsError | undefined {
  return causes(err).findLast((e): e is AwsError => e instanceof AwsError);
}

/**
 * The AWS refusal behind a failed check, if the check failed because AWS refused it (a terminal
 * AWS error, innermost counts) and not for an unreadable Secret: retried on the long backoff.
 */
export function refusalOf(err: unknown): AwsError | undefined {
  if (causes(err).some((e) => e instanceof SecretUnavailableError)) return undefined;
  const aws = innermostAwsError(err);
  return aws?.info.kind === "terminal" ? aws : undefined;
}

/** The Secret holding an external ID could not be read. */
export class SecretUnavailableError extends Error {
  override readonly name = "SecretUnavailableError";
}
