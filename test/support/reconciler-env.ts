/**
 * What the reconciler integration tests of every kind share: a real control plane with the CRDs,
 * moto behind a counting {@link AwsProxy}, the operator as a (restartable) child process, one
 * namespace, and helpers that create, read, patch and delete objects of one kind, wait for their
 * conditions and Events, and read the operator's reconcile and Kubernetes-write counters.
 *
 * A kind-specific fixture extends {@link ReconcilerEnv} with its AWS lookups (straight at moto,
 * not through the proxy, so they are not counted).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { Condition, Ec2Instance, S3Bucket, SqsQueue } from "../../src/api/v1/index.ts";
import type { KubeObject } from "../../src/runtime/kube/object.ts";
import { startAwsProxy, type AwsProxy, type AwsProxyOptions, type ProxiedCall } from "./aws-proxy.ts";
import { startBackends } from "./backends.ts";
import type { ControlPlane, RawResponse } from "./envtest.ts";
import type { Moto } from "./moto.ts";
import { startOperator, type LogLine, type OperatorProcess } from "./operator.ts";
import { waitFor, WAIT_MS } from "./process.ts";

/** The controller's debug log line that ends a reconcile with a requeue after a delay (a poll). */
const POLLED = "reconcile done, requeueing after delay";
/** The log lines that end a reconcile, whatever its outcome. */
const FINISHED = new Set([POLLED, "reconcile succeeded", "reconciler error"]);

/** HTTP methods of Kubernetes writes, as labelled in `rest_client_requests_total`. */
/**
 * The operator flags of every test environment: one process, no election, and short poll
 * periods (the shortest steady one the flag allows), so that a wait for a poll (steady, or of an EC2 transition) is short.
 */
export const TEST_OPERATOR_FLAGS = [
  "--leader-elect=false",
  "--poll-interval=1s",
  "--pending-poll-initial=500ms",
];

export const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

/** A condition as served. */
export type Cond = Condition;

/** A ConfigMap as served. */
export interface ServedConfigMap {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  };
  data?: Record<string, string>;
}

/** An object as the API server serves it: it always carries a uid and a resourceVersion. */
export type Served<T extends KubeObject> = T & {
  metadata: T["metadata"] & { uid: string; resourceVersion: string };
};

/** A managed object of any kind of `compute.cloud.com/v1`, as served. */
export type KubeObj = Served<Ec2Instance> | Served<S3Bucket> | Served<SqsQueue>;

/** An Event as listed. */
export interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  /** How many times the event occurred, when the recorder aggregated repeats into it. */
  count?: number;
}

/** The condition of `type` on `o`. */
export const cond = (o: KubeObj | undefined, type: string): Cond | undefined =>
  o?.status?.conditions?.find((c) => c.type === type);

/** The Ready condition of `o`. */
export const ready = (o: KubeObj | undefined): Cond | undefined => cond(o, "Ready");

/** Which kind a {@link ReconcilerEnv} manages and how. */
export interface KindOptions {
  /** The kind, e.g. `S3Bucket`. */
  kind: string;
  /** The resource's plural, e.g. `s3buckets`. */
  plural: string;
  /** The controller's name in the operator's metrics, e.g. `s3bucket`. */
  controller: string;
  /** The AWS operations that change state; a no-op reconcile makes none of them. */
  mutating: readonly string[];
  /** The spec every created object starts from (the caller's spec is merged over it). */
  defaults: (name: string) => Record<string, unknown>;
}

/** Options of one test file's environment. */
export interface EnvOptions {
  /** The namespace the objects live in; created by {@link ReconcilerEnv.start}. */
  ns: string;
  /**
   * Operator flags after {@link TEST_OPERATOR_FLAGS}: a file whose figures count polls at another
   * period sets its own `--poll-interval`.
   */
  operatorArgs?: string[];
  /** The operator program: the sources or a bundle. @default operatorProgram() (./operator-program.ts) */
  operatorEntry?: string;
  /** Latency and throttling of the proxy in front of moto. */
  proxy?: AwsProxyOptions;
  /** kube-controller-manager controllers to run beside the API server. @default none */
  controllers?: string[];
  /** More environment of the operator process (such as the downward API's POD_NAME). @default none */
  operatorEnv?: Record<string, string>;
}

/** A running environment for one test file, for objects of one kind of `compute.cloud.com/v1`. */
export class ReconcilerEnv<O extends KubeObj> {
  cp!: ControlPlane;
  moto!: Moto;
  proxy!: AwsProxy;
  /** The operator currently running; replaced by {@link startOperator}. */
  op!: OperatorProcess;
  readonly ns: string;
  readonly kind: KindOptions;
  readonly #operatorArgs: string[];
  readonly #operatorEntry: string | undefined;
  readonly #proxyOptions: AwsProxyOptions;
  readonly #controllers: string[] | undefined;
  readonly #operatorEnv: Record<string, string>;
  readonly #clients = new Map<string, { destroy(): void }>();
  #starts = 0;
  #metronome = false;

  constructor(kind: KindOptions, opts: EnvOptions) {
    this.kind = kind;
    this.ns = opts.ns;
    this.#operatorArgs = opts.operatorArgs ?? [];
    this.#operatorEntry = opts.operatorEntry;
    this.#proxyOptions = opts.proxy ?? {};
    this.#controllers = opts.controllers;
    this.#operatorEnv = opts.operatorEnv ?? {};
  }

  /** The collection path of the kind in the namespace. */
  get base(): string {
    return this.objects.base;
  }

  /** Registers {@link start} and {@link stop} as the enclosing suite's `before` and `after` hooks. */
  hooks(): this {
    before(() => this.start());
    after(() => this.stop());
    return this;
  }

  /** Starts the control plane (with CRDs) and moto, the proxy, the namespace and the operator. */
  async start(): Promise<void> {
    ({ cp: this.cp, moto: this.moto } = await startBackends({
      installCRDs: true,
      ...(this.#controllers !== undefined ? { controllers: this.#controllers } : {}),
    }));
    this.proxy = await startAwsProxy(this.moto.endpoint, this.#proxyOptions);
    await this.cp.request("POST", "/api/v1/namespaces", { metadata: { name: this.ns } });
    await this.startOperator();
  }

  /**
   * Starts a new operator process talking to AWS through the proxy; each one logs to its own
   * file. `extraArgs` follow the environment's own flags.
   */
  async startOperator(extraArgs: readonly string[] = []): Promise<OperatorProcess> {
    this.op = await startOperator({
      kubeconfig: this.cp.kubeconfigPath,
      env: { ...this.moto.env, AWS_ENDPOINT_URL: this.proxy.endpoint, ...this.#operatorEnv },
      dir: this.cp.dir,
      name: `operator-${++this.#starts}`,
      ...(this.#operatorEntry !== undefined ? { entry: this.#operatorEntry } : {}),
      args: [...TEST_OPERATOR_FLAGS, ...this.#operatorArgs, ...extraArgs],
    });
    return this.op;
  }

  /**
   * Makes this environment a view of another kind on `running`'s control plane, moto, proxy and
   * operator (the operator runs every kind's controller), so one test file covers two kinds with
   * one set of processes. Start and stop only `running`; this one destroys just its clients.
   */
  attachTo(running: ReconcilerEnv<KubeObj>): this {
    this.cp = running.cp;
    this.moto = running.moto;
    this.proxy = running.proxy;
    this.op = running.op;
    return this;
  }

  /** Destroys the AWS clients and stops everything that {@link start} started. */
  async stop(): Promise<void> {
    for (const c of this.#clients.values()) c.destroy();
    await this.op?.stop();
    await this.proxy?.stop();
    await this.moto?.stop();
    await this.cp?.stop();
  }

  /**
   * The AWS client made by `make` for `region`, created once and destroyed by {@link stop}. `make`
   * gets a config that talks to moto directly, so the client's calls are not counted by the proxy.
   */
  protected client<C extends { destroy(): void }>(
    region: string,
    make: (config: {
      region: string;
      endpoint: string;
      credentials: { accessKeyId: string; secretAccessKey: string };
    }) => C,
  ): C {
    let c = this.#clients.get(region) as C | undefined;
    if (c === undefined) {
      c = make({
        region,
        endpoint: this.moto.endpoint,
        credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
      });
      this.#clients.set(region, c);
    }
    return c;
  }

  /** The objects of the kind in the environment's namespace. */
  get objects(): KindObjects<O> {
    return new KindObjects<O>(this.cp, this.kind, this.ns);
  }

  /**
   * The objects of the kind in namespace `ns` (another tenant's), on the same control plane and
   * operator; the namespace is created when it does not exist.
   */
  async objectsIn(ns: string): Promise<KindObjects<O>> {
    const res = await this.cp.request("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    assert.ok(res.status === 201 || res.status === 409, res.text);
    return new KindObjects<O>(this.cp, this.kind, ns);
  }

  create(name: string, spec: Record<string, unknown> = {}): Promise<O> {
    return this.objects.create(name, spec);
  }

  get(name: string): Promise<O | undefined> {
    return this.objects.get(name);
  }

  patchResponse(name: string, body: unknown): Promise<RawResponse> {
    return this.objects.patchResponse(name, body);
  }

  patch(name: string, body: unknown): Promise<O> {
    return this.objects.patch(name, body);
  }

  delete(name: string): Promise<void> {
    return this.objects.delete(name);
  }

  waitUntil(
    name: string,
    what: string,
    pred: (o: O | undefined) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<O | undefined> {
    return this.objects.waitUntil(name, what, pred, timeoutMs);
  }

  waitReady(name: string, timeoutMs = WAIT_MS): Promise<O> {
    return this.objects.waitReady(name, timeoutMs);
  }

  waitReason(name: string, reason: string): Promise<O> {
    return this.objects.waitReason(name, reason);
  }

  waitGone(name: string, timeoutMs = WAIT_MS): Promise<void> {
    return this.objects.waitGone(name, timeoutMs);
  }

  events(name: string): Promise<KubeEvent[]> {
    return this.objects.events(name);
  }

  configMap(name: string): Promise<ServedConfigMap | undefined> {
    return this.objects.configMap(name);
  }

  waitConfigMap(
    name: string,
    what: string,
    pred: (cm: ServedConfigMap | undefined) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<ServedConfigMap | undefined> {
    return this.objects.waitConfigMap(name, what, pred, timeoutMs);
  }

  hasEvent(name: string, type: string, reason: string): Promise<boolean> {
    return this.objects.hasEvent(name, type, reason);
  }

  waitEvent(name: string, type: string, reason: string, timeoutMs = 15_000): Promise<void> {
    return this.objects.waitEvent(name, type, reason, timeoutMs);
  }

  /** The operator's metric `metric` for this kind's controller, optionally for one `result`. */
  controllerMetric(metric: string, result?: string): Promise<number> {
    return this.op.metric(metric, {
      controller: this.kind.controller,
      ...(result !== undefined ? { result } : {}),
    });
  }

  /** `controller_runtime_reconcile_total` of the kind's controller, optionally for one result. */
  reconciles(result?: string): Promise<number> {
    return this.controllerMetric("controller_runtime_reconcile_total", result);
  }

  /** Waits until the controller has reconciled at least `n` more times (with `result`, if given). */
  async waitReconciles(n: number, result?: string): Promise<void> {
    const start = await this.reconciles(result);
    await waitFor(
      `${n} more reconciles`,
      async () => (await this.reconciles(result)) >= start + n,
      WAIT_MS,
      100,
    );
  }

  /**
   * How many reconciles of object `name` (in this file's namespace unless `ns` is given) the
   * current operator process has finished, whatever their outcome, read from its debug log.
   */
  reconcilesOf(name: string, ns = this.ns): number {
    return this.#finished(name, ns).length;
  }

  /** The log lines that end the current operator's reconciles of object `name`, in order. */
  #finished(name: string, ns = this.ns): LogLine[] {
    return this.op
      .logLines()
      .filter((l) => l.name === name && l.namespace === ns && FINISHED.has(l.msg ?? ""));
  }

  /** Waits until object `name` (in this file's namespace) has finished `n` more reconciles. */
  async waitReconcilesOf(name: string, n: number): Promise<void> {
    const start = this.reconcilesOf(name);
    await waitFor(
      `${n} more reconciles of ${name}`,
      async () => this.reconcilesOf(name) >= start + n,
      WAIT_MS + n * 10_000,
      100,
    );
  }

  /**
   * The AWS calls of `service` made by the next `reconciles` reconciles of object `name`. The
   * window runs from the end of the last reconcile of `name` before the call to the end of the
   * `reconciles`-th after it, by the operator's log times, so a reconcile in flight at either edge
   * counts with all its calls or not at all: the calls of the next reconcile reach the proxy after
   * the previous one has ended. Every call of `service` in the window is counted, so nothing else
   * may call that service meanwhile.
   */
  async callsOfReconciles(name: string, reconciles: number, service: string): Promise<ProxiedCall[]> {
    await waitFor(`a reconcile of ${name}`, async () => this.reconcilesOf(name) > 0, WAIT_MS, 100);
    const from = this.reconcilesOf(name) - 1;
    await this.waitReconcilesOf(name, reconciles);
    const edges = this.#finished(name).map((l) => Date.parse(String(l.time)));
    const [start, end] = [edges[from], edges[from + reconciles]];
    assert.ok(start !== undefined && end !== undefined);
    return this.proxy.calls.filter((c) => c.service === service && c.at > start && c.at <= end);
  }

  /**
   * Waits until `polls` more poll periods have passed in the operator itself, instead of a fixed
   * sleep: a metronome SqsQueue (created on first use, left until {@link stop}) is reconciled
   * once per `--poll-interval`, and this counts its polls. Its queue's CreateQueue happens before
   * the first wait returns, so take AWS call counts after awaiting this once.
   */
  async waitPolls(polls: number): Promise<void> {
    const name = "metronome";
    const polled = (): number =>
      this.op.logLines().filter((l) => l.name === name && l.namespace === this.ns && l.msg === POLLED).length;
    if (!this.#metronome) {
      this.#metronome = true;
      const res = await this.cp.request(
        "POST",
        `/apis/compute.cloud.com/v1/namespaces/${this.ns}/sqsqueues`,
        {
          apiVersion: "compute.cloud.com/v1",
          kind: "SqsQueue",
          metadata: { name },
          spec: { region: "us-east-1", queueName: `metronome-${this.ns}` },
        },
      );
      assert.equal(res.status, 201, res.text);
      // Two polls: by the second, the writes of its creation (status, Events) are long done.
      await waitFor("the metronome's first polls", async () => polled() >= 2, WAIT_MS, 100);
    }
    const start = polled();
    await waitFor(
      `${polls} poll periods`,
      async () => polled() >= start + polls,
      WAIT_MS + polls * 10_000,
      200,
    );
  }

  /** Reconcile errors of the kind's controller that were not terminal, so were retried with backoff. */
  async retriedErrors(): Promise<number> {
    return (
      (await this.controllerMetric("controller_runtime_reconcile_errors_total")) -
      (await this.controllerMetric("controller_runtime_terminal_reconcile_errors_total"))
    );
  }

  /** Kubernetes writes made by the current operator process so far. */
  async kubeWrites(): Promise<number> {
    let n = 0;
    for (const method of WRITES) n += await this.op.metric("rest_client_requests_total", { method });
    return n;
  }

  /** How often the proxy has seen each of the kind's mutating AWS operations, in their order. */
  mutations(): number[] {
    return this.kind.mutating.map((op) => this.proxy.count(op));
  }
}

/**
 * Objects of one kind in one namespace of a control plane: create, read, patch and delete them,
 * and wait for their conditions and Events.
 */
export class KindObjects<O extends KubeObj> {
  readonly cp: ControlPlane;
  readonly kind: KindOptions;
  readonly ns: string;

  constructor(cp: ControlPlane, kind: KindOptions, ns: string) {
    this.cp = cp;
    this.kind = kind;
    this.ns = ns;
  }

  /** The collection path of the kind in the namespace. */
  get base(): string {
    return `/apis/compute.cloud.com/v1/namespaces/${this.ns}/${this.kind.plural}`;
  }

  /** Creates object `name` with the kind's default spec merged with `spec`; expects 201. */
  async create(name: string, spec: Record<string, unknown> = {}): Promise<O> {
    const res = await this.cp.request("POST", this.base, {
      apiVersion: "compute.cloud.com/v1",
      kind: this.kind.kind,
      metadata: { name },
      spec: { ...this.kind.defaults(name), ...spec },
    });
    assert.equal(res.status, 201, res.text);
    return res.body as O;
  }

  /** Object `name`, or undefined when it does not exist. */
  async get(name: string): Promise<O | undefined> {
    const res = await this.cp.request("GET", `${this.base}/${name}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as O;
  }

  /** A JSON merge patch of object `name`, answered as it is. */
  patchResponse(name: string, body: unknown): Promise<RawResponse> {
    return this.cp.request("PATCH", `${this.base}/${name}`, body, "application/merge-patch+json");
  }

  /** A JSON merge patch of object `name`; expects 200. */
  async patch(name: string, body: unknown): Promise<O> {
    const res = await this.patchResponse(name, body);
    assert.equal(res.status, 200, res.text);
    return res.body as O;
  }

  /** Deletes object `name` (it may linger while its finalizer runs); expects 200 or 202. */
  async delete(name: string): Promise<void> {
    const res = await this.cp.request("DELETE", `${this.base}/${name}`);
    assert.ok(res.status === 200 || res.status === 202, res.text);
  }

  /** Polls object `name` until `pred` holds of it (undefined once it is gone); returns what it saw. */
  async waitUntil(
    name: string,
    what: string,
    pred: (o: O | undefined) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<O | undefined> {
    let last: O | undefined;
    await waitFor(`${name}: ${what}`, async () => pred((last = await this.get(name))), timeoutMs, 150);
    return last;
  }

  /** Waits until object `name` is Ready=True. */
  async waitReady(name: string, timeoutMs = WAIT_MS): Promise<O> {
    return (await this.waitUntil(name, "Ready=True", (o) => ready(o)?.status === "True", timeoutMs)) as O;
  }

  /** Waits until the Ready condition of object `name` has `reason`. */
  async waitReason(name: string, reason: string): Promise<O> {
    return (await this.waitUntil(name, `Ready reason ${reason}`, (o) => ready(o)?.reason === reason)) as O;
  }

  /** Waits until object `name` no longer exists. */
  async waitGone(name: string, timeoutMs = WAIT_MS): Promise<void> {
    await this.waitUntil(name, "object gone", (o) => o === undefined, timeoutMs);
  }

  /** The Events about object `name`. */
  async events(name: string): Promise<KubeEvent[]> {
    const res = await this.cp.request(
      "GET",
      `/api/v1/namespaces/${this.ns}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return (res.body as { items: KubeEvent[] }).items;
  }

  /** ConfigMap `name` of the namespace, or undefined when it does not exist. */
  async configMap(name: string): Promise<ServedConfigMap | undefined> {
    const res = await this.cp.request("GET", `/api/v1/namespaces/${this.ns}/configmaps/${name}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as ServedConfigMap;
  }

  /** Polls ConfigMap `name` until `pred` holds of it (undefined once it is gone); returns what it saw. */
  async waitConfigMap(
    name: string,
    what: string,
    pred: (cm: ServedConfigMap | undefined) => boolean,
    timeoutMs = WAIT_MS,
  ): Promise<ServedConfigMap | undefined> {
    let last: ServedConfigMap | undefined;
    await waitFor(
      `ConfigMap ${name}: ${what}`,
      async () => pred((last = await this.configMap(name))),
      timeoutMs,
      150,
    );
    return last;
  }

  /** Whether an Event of `type` and `reason` about object `name` exists. */
  async hasEvent(name: string, type: string, reason: string): Promise<boolean> {
    return (await this.events(name)).some((e) => e.type === type && e.reason === reason);
  }

  /** Waits until {@link hasEvent} holds. */
  async waitEvent(name: string, type: string, reason: string, timeoutMs = 15_000): Promise<void> {
    await waitFor(
      `${name}: ${type} event ${reason}`,
      () => this.hasEvent(name, type, reason),
      timeoutMs,
      150,
    );
  }
}
