/**
 * The credentials and AWS clients of every AwsAccount, shared by the AwsAccount controller (which
 * checks them) and the managed kinds (whose drivers call AWS with them). One entry per AwsAccount,
 * built afresh when the object is replaced or its spec changes (uid or generation): then the
 * previous entry's clients are closed, since the SDK keeps credentials inside each client.
 *
 * The role is assumed (sts:AssumeRole) with the operator's own credentials, from the default
 * provider chain, when a client first needs credentials, and again before they expire
 * (./session.ts). The external ID is read (from the spec, or from its Secret) at each AssumeRole.
 */
import { AssumeRoleCommand } from "@aws-sdk/client-sts";
import type { AwsAccount } from "../api/v1/aws-account.ts";
import type { AccountScope, AwsClientSource } from "../aws/clients.ts";
import type { Clock } from "../runtime/clock.ts";
import { RoleSession, type SessionCredentials } from "./session.ts";

/** What the sessions need from the AWS client factory. */
export interface AccountClientFactory extends AwsClientSource {
  forAccount(scope: AccountScope): AwsClientSource;
  dropAccount(key: string): void;
}

/** Reads one key of a Secret (decoded), or throws. */
export type SecretReader = (ref: { namespace: string; name: string; key: string }) => Promise<string>;

/** Options of {@link AccountSessions}. */
export interface AccountSessionsOptions {
  /** The operator's own clients (its STS client assumes the roles) and the per-account factory. */
  aws: AccountClientFactory;
  /** Region of the STS endpoint the roles are assumed at. */
  stsRegion: string;
  readSecret: SecretReader;
  clock: Clock;
}

/** One AwsAccount's session and clients. */
export interface AccountEntry {
  /** AWS account ID of the role (from its ARN); the assumed identity's account. */
  readonly roleAccountId: string;
  readonly session: RoleSession;
  /** Clients acting with the assumed role's credentials. */
  readonly aws: AwsClientSource;
  readonly uid: string;
  readonly generation: number;
}

/** See the module comment. */
export class AccountSessions {
  readonly #o: AccountSessionsOptions;
  readonly #entries = new Map<string, AccountEntry>();

  constructor(opts: AccountSessionsOptions) {
    this.#o = opts;
  }

  /** The operator's own region for STS calls. */
  get stsRegion(): string {
    return this.#o.stsRegion;
  }

  /** The entry of `account`, rebuilt when the object was replaced or its spec changed. */
  entry(account: Readonly<AwsAccount>): AccountEntry {
    const name = account.metadata.name ?? "";
    const uid = account.metadata.uid ?? "";
    const generation = account.metadata.generation ?? 0;
    const cur = this.#entries.get(name);
    if (cur !== undefined && cur.uid === uid && cur.generation === generation) return cur;
    if (cur !== undefined) this.#o.aws.dropAccount(scopeKey(name, cur.uid, cur.generation));
    const spec = structuredClone(account.spec);
    const roleAccountId = accountIdOfRole(spec.roleArn);
    const session = new RoleSession({
      clock: this.#o.clock,
      assume: async (): Promise<SessionCredentials> => {
        const externalId =
          spec.externalIdSecretRef !== undefined
            ? await this.#o.readSecret(spec.externalIdSecretRef)
            : spec.externalId;
        const out = await (
          await this.#o.aws.client("sts", this.#o.stsRegion)
        ).send(
          new AssumeRoleCommand({
            RoleArn: spec.roleArn,
            RoleSessionName: sessionNameOf(name, spec.sessionName),
            DurationSeconds: spec.sessionDurationSeconds,
            ...(externalId !== undefined ? { ExternalId: externalId } : {}),
          }),
        );
        const c = out.Credentials;
        if (
          c?.AccessKeyId === undefined ||
          c.SecretAccessKey === undefined ||
          c.SessionToken === undefined ||
          c.Expiration === undefined
        ) {
          throw new Error("AssumeRole answered without credentials");
        }
        return {
          accessKeyId: c.AccessKeyId,
          secretAccessKey: c.SecretAccessKey,
          sessionToken: c.SessionToken,
          expiration: new Date(c.Expiration),
        };
      },
    });
    const aws = this.#o.aws.forAccount({
      key: scopeKey(name, uid, generation),
      accountId: roleAccountId,
      credentials: () => session.credentials(),
    });
    const entry: AccountEntry = { roleAccountId, session, aws, uid, generation };
    this.#entries.set(name, entry);
    return entry;
  }

  /** Forgets the account `name` (deleted) and closes its clients. */
  forget(name: string): void {
    const cur = this.#entries.get(name);
    if (cur === undefined) return;
    this.#o.aws.dropAccount(scopeKey(name, cur.uid, cur.generation));
    this.#entries.delete(name);
  }
}

function scopeKey(name: string, uid: string, generation: number): string {
  return `account/${name}/${uid}/${generation}`;
}

/** The role session name: the spec's, else `kubeprovisioner-<name>` cut to AWS's 64 characters. */
export function sessionNameOf(name: string, given: string | undefined): string {
  return given ?? `kubeprovisioner-${name}`.slice(0, 64);
}

/** The account ID in a role ARN (`arn:aws:iam::123456789012:role/x`). */
export function accountIdOfRole(roleArn: string): string {
  return roleArn.split(":")[4] ?? "";
}
