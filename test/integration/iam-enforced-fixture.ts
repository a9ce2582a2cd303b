/**
 * The estate of the IAM-enforced files: one operator running as the IAM user `kubeprovisioner`,
 * whose only policy is a generated policy of config/iam, on a test AWS of the file's own that
 * enforces IAM (test/support/enforced-iam.ts), beside a control plane with the CRDs; and the
 * S3Bucket, SqsQueue and Ec2Instance views of it. The test's own AWS calls (reading back,
 * changing things out of band) are the harness administrator's.
 *
 * The operator talks to the emulator directly, not through the counting proxy: a request is
 * signed for the host it is sent to, which the proxy rewrites. What it called, and what AWS
 * answered, is read from its own `aws_api_requests_total`.
 */
import { after, before } from "node:test";
import { SERVICE_IAM_PREFIX, type AwsService } from "../../src/aws/service.ts";
import { KINDS } from "../../src/kinds.ts";
import { IAM_FEATURES } from "../../src/gen/iam.ts";
import { callsOf } from "../../src/reconcilers/common/kind.ts";
import { metricSamples, type Sample } from "../../src/runtime/testing/prometheus-text.ts";
import { startAwsProxy } from "../support/aws-proxy.ts";
import {
  startEnforcedAws,
  type AccessKey,
  type EnforcedAws,
  type PolicyDocument,
} from "../support/enforced-iam.ts";
import { startControlPlane } from "../support/envtest.ts";
import type { EnvOptions } from "../support/reconciler-env.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

/** The operator's IAM user. */
export const OPERATOR_USER = "kubeprovisioner";

/** The AWS error codes of a call IAM refused. */
export const DENIALS = ["AccessDenied", "AccessDeniedException", "UnauthorizedOperation"];

/** How a fixture's AWS client is made: the config every fixture client gets. */
type ClientMaker<C> = (config: {
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}) => C;

/** The S3Bucket view, calling AWS as the harness administrator. */
class HarnessS3Env extends S3Env {
  readonly #key: () => AccessKey;
  constructor(ns: string, opts: Omit<EnvOptions, "ns">, key: () => AccessKey) {
    super(ns, opts);
    this.#key = key;
  }
  protected override client<C extends { destroy(): void }>(region: string, make: ClientMaker<C>): C {
    return super.client(region, (config) => make({ ...config, credentials: this.#key() }));
  }
}

/** The SqsQueue view, calling AWS as the harness administrator. */
class HarnessSqsEnv extends SqsEnv {
  readonly #key: () => AccessKey;
  constructor(ns: string, key: () => AccessKey) {
    super(ns);
    this.#key = key;
  }
  protected override client<C extends { destroy(): void }>(region: string, make: ClientMaker<C>): C {
    return super.client(region, (config) => make({ ...config, credentials: this.#key() }));
  }
}

/** The Ec2Instance view, calling AWS as the harness administrator. */
class HarnessEc2Env extends Ec2Env {
  readonly #key: () => AccessKey;
  constructor(ns: string, key: () => AccessKey) {
    super({ ns });
    this.#key = key;
  }
  protected override client<C extends { destroy(): void }>(region: string, make: ClientMaker<C>): C {
    return super.client(region, (config) => make({ ...config, credentials: this.#key() }));
  }
}

/** Options of an {@link IamEstate}. */
export interface IamEstateOptions {
  /** The namespace of the objects. */
  ns: string;
  /** The operator's only policy. */
  policy: PolicyDocument;
  /** Operator flags after the environment's own. */
  operatorArgs?: string[];
  /**
   * What the objects need in the account, made before enforcement starts; answers more operator
   * flags, if any.
   */
  prepare?: (aws: EnforcedAws) => Promise<string[] | void>;
}

/** One kind of AWS call the operator made, with how often and how AWS answered. */
export interface AwsCall {
  /** The IAM prefix of its service (`s3`, `sqs`, `ec2`, `tag`, `sts`). */
  prefix: string;
  operation: string;
  /** `OK` or the AWS error code. */
  code: string;
  count: number;
}

/** See the module comment. */
export class IamEstate {
  aws!: EnforcedAws;
  /** The access key of the operator's IAM user. */
  operatorKey!: AccessKey;
  readonly s3: S3Env;
  readonly sqs: SqsEnv;
  readonly ec2: Ec2Env;
  readonly #opts: IamEstateOptions;
  /** The operator's AWS environment, filled in once its user exists (read when it starts). */
  readonly #operatorEnv: Record<string, string> = {};

  constructor(opts: IamEstateOptions) {
    this.#opts = opts;
    const key = (): AccessKey => this.aws.harness;
    this.s3 = new HarnessS3Env(
      opts.ns,
      { operatorArgs: opts.operatorArgs ?? [], operatorEnv: this.#operatorEnv },
      key,
    );
    this.sqs = new HarnessSqsEnv(opts.ns, key);
    this.ec2 = new HarnessEc2Env(opts.ns, key);
  }

  /** Registers {@link start} and {@link stop} as the enclosing suite's hooks. */
  hooks(): this {
    before(() => this.start());
    after(() => this.stop());
    return this;
  }

  /** Starts the control plane and the emulator, makes the operator's user, enforces IAM, starts the operator. */
  async start(): Promise<void> {
    const [cp, aws] = await Promise.allSettled([
      startControlPlane({ installCRDs: true }),
      startEnforcedAws(),
    ]);
    if (cp.status === "rejected" || aws.status === "rejected") {
      await Promise.all([
        cp.status === "fulfilled" ? cp.value.stop() : undefined,
        aws.status === "fulfilled" ? aws.value.moto.stop() : undefined,
      ]);
      throw cp.status === "rejected" ? cp.reason : (aws as PromiseRejectedResult).reason;
    }
    this.aws = aws.value;
    this.s3.cp = cp.value;
    this.s3.moto = this.aws.moto;
    const key = await this.aws.createUser(OPERATOR_USER, this.#opts.policy);
    this.operatorKey = key;
    const args = (await this.#opts.prepare?.(this.aws)) ?? [];
    await this.aws.enforce();
    Object.assign(this.#operatorEnv, {
      AWS_ENDPOINT_URL: this.aws.moto.endpoint,
      AWS_ACCESS_KEY_ID: key.accessKeyId,
      AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    });
    // The operator's environment names the emulator itself; the proxy serves no call of its.
    this.s3.proxy = await startAwsProxy(this.aws.moto.endpoint);
    await this.s3.cp.request("POST", "/api/v1/namespaces", { metadata: { name: this.#opts.ns } });
    await this.s3.startOperator(args);
    this.sqs.attachTo(this.s3);
    this.ec2.attachTo(this.s3);
  }

  async stop(): Promise<void> {
    await this.ec2.stop();
    await this.sqs.stop();
    await this.s3.stop();
  }

  /** Replaces the operator's only policy. */
  setPolicy(policy: PolicyDocument): Promise<void> {
    return this.aws.putUserPolicy(OPERATOR_USER, policy);
  }

  /** Every kind of AWS call the operator has made so far (`aws_api_requests_total`). */
  async awsCalls(): Promise<AwsCall[]> {
    const url = this.s3.op.metricsUrl;
    if (url === undefined) throw new Error("the operator's metrics are not served");
    const samples: Sample[] = metricSamples(await (await fetch(url)).text(), "aws_api_requests_total");
    return samples
      .filter((s) => s.value > 0)
      .map((s) => ({
        prefix: SERVICE_IAM_PREFIX[s.labels.service as AwsService] ?? String(s.labels.service),
        operation: String(s.labels.operation),
        code: String(s.labels.code),
        count: s.value,
      }));
  }
}

/**
 * The IAM actions the kinds and features declare for the calls `calls` (their IAM declarations,
 * from which config/iam is generated): what those calls exercised of the policy.
 */
export function declaredActionsOf(calls: readonly AwsCall[]): Set<string> {
  const declared = [...KINDS.flatMap((k) => k.iam), ...IAM_FEATURES.flatMap((f) => f.iam)];
  const out = new Set<string>();
  for (const call of calls)
    for (const a of declared)
      if (a.action.startsWith(`${call.prefix}:`) && callsOf(a).includes(call.operation)) out.add(a.action);
  return out;
}
