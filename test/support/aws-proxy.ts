/**
 * An HTTP proxy in front of the AWS emulator that names every call it forwards (`RunInstances`,
 * `CreateQueue`, `CreateBucket`, ...) and can hold back a response: the call still happens in the
 * emulator, but the client never hears of it. That is exactly a process dying between an AWS
 * create and the status write that would record it.
 *
 * It can also inject faults into a share of the calls: HTTP 500 and 503, the service's own
 * throttling error (EC2 `RequestLimitExceeded`, S3 `SlowDown`, SQS `ThrottlingException`), or a
 * connection reset (before the call reaches the emulator, or after, so the call happened but its
 * answer is lost).
 */
import { createServer, request, type ClientRequest, type IncomingHttpHeaders, type Server } from "node:http";

/** One call the proxy saw. */
export interface ProxiedCall {
  operation: string;
  /** The service, from the request's signature scope (`ec2`, `s3`, `sqs`). */
  service: string;
  /** The access key ID the request is signed with (which identity, hence which account, made it). */
  accessKeyId?: string;
  /** The status the client got (0 for a reset connection). */
  status: number;
  /** When the proxy received the request (ms since the epoch). */
  at: number;
  /** The injected fault, if any. */
  fault?: FaultKind;
  /** The bucket or queue name, or instance ID, the call is about (with `resources`: S3, SQS and EC2 calls). */
  resource?: string;
  /** When the answer came back, in ms since the epoch (with `resources`). */
  answeredAt?: number;
}

/**
 * What to do when a matching call's response comes back; a promise holds the response back until
 * it settles (the call is in flight for the client all that time; a rejection drops it).
 */
export type ResponseHook = (call: ProxiedCall) => "deliver" | "drop" | Promise<"deliver" | "drop">;

/** A fault the proxy can inject. */
export type FaultKind = "http500" | "http503" | "throttle" | "reset-before" | "reset-after";

/** Which calls fail and how. */
export interface FaultPlan {
  /** Share of calls that fail, 0..1. */
  rate: number;
  /** The faults to choose from, uniformly. @default every {@link FaultKind} */
  kinds?: readonly FaultKind[];
  /** Source of randomness in [0, 1). @default Math.random */
  random?: () => number;
}

const ALL_FAULTS: readonly FaultKind[] = ["http500", "http503", "throttle", "reset-before", "reset-after"];

/** The service a signed request is for: the fourth part of its SigV4 credential scope. */
export function serviceOf(headers: IncomingHttpHeaders): string {
  const auth = headers.authorization ?? "";
  const m = /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(auth);
  return m?.[1] ?? "unknown";
}

/** The access key ID of a signed request: the first part of its SigV4 credential scope. */
export function accessKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const m = /Credential=([^/]+)\//.exec(headers.authorization ?? "");
  return m?.[1];
}

/** An error response as `service` sends it for `fault` (a throttle, a 500 or a 503). */
export function faultResponse(
  service: string,
  fault: "http500" | "http503" | "throttle",
): { status: number; headers: Record<string, string>; body: string } {
  if (service === "sqs") {
    // SQS speaks the JSON protocol (awsJson1_0) with the query-era code in a header.
    const [status, type, queryCode] =
      fault === "throttle"
        ? [400, "ThrottlingException", "RequestThrottled;Sender"]
        : fault === "http500"
          ? [500, "InternalFailure", "InternalFailure;Receiver"]
          : [503, "ServiceUnavailable", "ServiceUnavailable;Receiver"];
    return {
      status,
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amzn-query-error": queryCode,
      },
      body: JSON.stringify({ __type: `com.amazonaws.sqs#${type}`, message: "injected fault" }),
    };
  }
  const [status, code] =
    fault === "throttle"
      ? [503, service === "ec2" ? "RequestLimitExceeded" : "SlowDown"]
      : fault === "http500"
        ? [500, "InternalError"]
        : [503, service === "ec2" ? "Unavailable" : "ServiceUnavailable"];
  const body =
    service === "ec2"
      ? `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>injected fault</Message></Error></Errors><RequestID>injected</RequestID></Response>`
      : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected fault</Message><RequestId>injected</RequestId></Error>`;
  return { status, headers: { "content-type": "application/xml" }, body };
}

/**
 * Whether a call may go on to the emulator, or is answered as throttled (EC2's answer) or as
 * refused (an `AccessDenied` in the query protocol's error shape, as STS and EC2 send it) instead.
 */
export type RequestGate = (operation: string, body: string) => "forward" | "throttle" | "deny";

/** Options of {@link startAwsProxy}. */
export interface AwsProxyOptions {
  /** Milliseconds to hold each call before forwarding it, drawn per call. */
  latencyMs?: () => number;
  /** Refuses calls with EC2's throttling answer; they are recorded with status 503. */
  gate?: RequestGate;
  /** The address to listen on (a cluster's pods reach the host's address of their link). @default 127.0.0.1 */
  host?: string;
  /** Record each S3 and SQS call's bucket or queue name and the time of its answer. */
  resources?: boolean;
}

/** EC2's answer to a call whose throttling bucket is empty. */
const REQUEST_LIMIT_EXCEEDED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>RequestLimitExceeded</Code>' +
  "<Message>Request limit exceeded.</Message></Error></Errors><RequestID>throttled</RequestID></Response>";

/** A refusal in the query protocol's error shape (STS, EC2). */
const ACCESS_DENIED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>' +
  "<Message>User is not authorized to perform: sts:AssumeRole</Message></Error><RequestId>denied</RequestId></ErrorResponse>";

/** A running proxy. */
export interface AwsProxy {
  readonly endpoint: string;
  readonly calls: ProxiedCall[];
  /** Calls named `operation` so far. */
  count(operation: string): number;
  /**
   * Runs `hook` on the next response of `operation` (once); "drop" closes the connection
   * unanswered, a promise delays the answer until it settles.
   */
  onResponse(operation: string, hook: ResponseHook): void;
  /** Injects faults into calls from now on; undefined stops injecting. */
  setFaults(plan: FaultPlan | undefined): void;
  /** Injected faults so far, by kind. */
  faults(): Record<FaultKind, number>;
  /** RunInstances calls answered with an earlier launch of the same ClientToken. */
  launchReplays(): number;
  stop(): Promise<void>;
}

const S3_QUERY_OPS: Record<string, string> = {
  tagging: "BucketTagging",
  versioning: "BucketVersioning",
  location: "BucketLocation",
  policy: "BucketPolicy",
  encryption: "BucketEncryption",
  publicAccessBlock: "PublicAccessBlock",
  lifecycle: "BucketLifecycleConfiguration",
  ownershipControls: "BucketOwnershipControls",
  notification: "BucketNotificationConfiguration",
  replication: "BucketReplication",
  logging: "BucketLogging",
  "object-lock": "ObjectLockConfiguration",
  cors: "BucketCors",
  website: "BucketWebsite",
  "list-type": "ListObjectsV2",
  versions: "ListObjectVersions",
  delete: "DeleteObjects",
};

/** The AWS operation a request names: X-Amz-Target (JSON), Action (query) or S3's REST shape. */
export function operationOf(method: string, url: string, headers: IncomingHttpHeaders, body: string): string {
  const target = headers["x-amz-target"];
  if (typeof target === "string") return target.slice(target.lastIndexOf(".") + 1);
  const ctype = headers["content-type"] ?? "";
  if (ctype.includes("x-www-form-urlencoded")) {
    const action = new URLSearchParams(body).get("Action");
    if (action) return action;
  }
  const u = new URL(url, "http://x");
  const segments = u.pathname.split("/").filter(Boolean);
  const key = [...u.searchParams.keys()].find((k) => k in S3_QUERY_OPS);
  const verb = { GET: "Get", PUT: "Put", DELETE: "Delete", HEAD: "Head", POST: "Post" }[method] ?? method;
  if (key !== undefined) {
    const op = S3_QUERY_OPS[key] ?? key;
    if (key === "lifecycle" && method === "DELETE") return "DeleteBucketLifecycle";
    return op.startsWith("List") || op === "DeleteObjects" ? op : `${verb}${op}`;
  }
  if (segments.length === 0) return method === "GET" ? "ListBuckets" : `${verb}Service`;
  if (segments.length === 1) {
    return (
      { PUT: "CreateBucket", DELETE: "DeleteBucket", HEAD: "HeadBucket", GET: "ListObjects" }[method] ??
      `${verb}Bucket`
    );
  }
  return `${verb}Object`;
}

/**
 * The bucket, queue or instance a request is about: S3's bucket from the path (path style) or the
 * host's first label (virtual-hosted style), SQS's queue from the last part of `QueueUrl` (JSON or
 * query protocol), EC2's first `InstanceId.1` (query protocol). Undefined for other services and
 * for calls about no single one.
 */
export function resourceOf(
  service: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: string,
  proxyHost: string,
): string | undefined {
  if (service === "s3") {
    const host = headers.host ?? "";
    if (host !== proxyHost && host.includes(".")) {
      const label = host.slice(0, host.indexOf("."));
      if (!/^\d+$/.test(label) && label !== "s3") return label;
    }
    const first = new URL(url, "http://x").pathname.split("/").find(Boolean);
    return first !== undefined ? decodeURIComponent(first) : undefined;
  }
  if (service === "sqs") {
    let queueUrl: string | null | undefined;
    if ((headers["content-type"] ?? "").includes("json")) {
      try {
        const input = JSON.parse(body) as { QueueUrl?: string; QueueName?: string };
        queueUrl = input.QueueUrl ?? input.QueueName;
      } catch {
        return undefined;
      }
    } else {
      const form = new URLSearchParams(body);
      queueUrl = form.get("QueueUrl") ?? form.get("QueueName");
    }
    return queueUrl?.slice(queueUrl.lastIndexOf("/") + 1) || undefined;
  }
  if (service === "ec2") return new URLSearchParams(body).get("InstanceId.1") ?? undefined;
  return undefined;
}

/** An upstream answer. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The ClientToken of a form-encoded EC2 request, if any. */
function clientToken(body: Buffer): string | undefined {
  return new URLSearchParams(body.toString("utf8")).get("ClientToken") ?? undefined;
}

/** Starts a proxy to `target` (the emulator's endpoint) on a free loopback port. */
export async function startAwsProxy(target: string, opts: AwsProxyOptions = {}): Promise<AwsProxy> {
  const calls: ProxiedCall[] = [];
  const hooks = new Map<string, ResponseHook>();
  const upstream = new URL(target);
  let plan: FaultPlan | undefined;
  const injected: Record<FaultKind, number> = {
    http500: 0,
    http503: 0,
    throttle: 0,
    "reset-before": 0,
    "reset-after": 0,
  };
  const pickFault = (): FaultKind | undefined => {
    if (plan === undefined) return undefined;
    const random = plan.random ?? Math.random;
    if (random() >= plan.rate) return undefined;
    const kinds = plan.kinds ?? ALL_FAULTS;
    return kinds[Math.floor(random() * kinds.length)];
  };
  // EC2 answers a RunInstances that repeats a ClientToken with the original launch, without
  // launching again; moto ignores the token, so the proxy does what EC2 does. Without this an
  // SDK retry of a launch whose answer was lost (a reset after the call) would start a second
  // instance that real EC2 never would.
  const launches = new Map<string, Promise<Answer>>();
  let replays = 0;
  // The requests forwarded and not answered yet (an SQS long poll waits up to 20 s): stopping
  // the proxy ends them, so no socket to the emulator outlives it.
  const inFlight = new Set<ClientRequest>();
  const forward = (
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const out = request(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          method,
          path: url,
          headers: { ...headers, host: upstream.host },
        },
        (up) => {
          const upChunks: Buffer[] = [];
          up.on("data", (c: Buffer) => upChunks.push(c));
          up.on("end", () =>
            resolve({ status: up.statusCode ?? 502, headers: up.headers, body: Buffer.concat(upChunks) }),
          );
          up.on("error", reject);
        },
      );
      inFlight.add(out);
      out.on("close", () => inFlight.delete(out));
      out.on("error", reject);
      out.end(body);
    });
  let ownHost = "";
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const operation = operationOf(req.method ?? "GET", req.url ?? "/", req.headers, body.toString("utf8"));
      const at = Date.now();
      const handle = (): void => {
        const service = serviceOf(req.headers);
        const key = accessKeyOf(req.headers);
        const accessKeyId = key !== undefined ? { accessKeyId: key } : {};
        const verdict = opts.gate?.(operation, body.toString("utf8"));
        if (verdict === "throttle") {
          calls.push({ operation, service, ...accessKeyId, at, status: 503 });
          res.writeHead(503, { "content-type": "text/xml" });
          res.end(REQUEST_LIMIT_EXCEEDED);
          return;
        }
        if (verdict === "deny") {
          calls.push({ operation, service, ...accessKeyId, at, status: 403 });
          res.writeHead(403, { "content-type": "text/xml" });
          res.end(ACCESS_DENIED);
          return;
        }
        const fault = pickFault();
        if (fault !== undefined) injected[fault] += 1;
        if (fault === "reset-before") {
          calls.push({ operation, service, ...accessKeyId, at, status: 0, fault });
          req.socket.destroy();
          return;
        }
        if (fault === "http500" || fault === "http503" || fault === "throttle") {
          const answer = faultResponse(service, fault);
          calls.push({ operation, service, ...accessKeyId, at, status: answer.status, fault });
          res.writeHead(answer.status, answer.headers);
          res.end(req.method === "HEAD" ? undefined : answer.body);
          return;
        }
        const token = operation === "RunInstances" ? clientToken(body) : undefined;
        let answer = token !== undefined ? launches.get(token) : undefined;
        if (answer !== undefined) replays += 1;
        else {
          answer = forward(req.method ?? "GET", req.url ?? "/", req.headers, body);
          if (token !== undefined) {
            launches.set(token, answer);
            // Only a launch that happened is remembered; a failed one may be tried again.
            answer.then(
              (a) => {
                if (a.status !== 200) launches.delete(token);
              },
              () => launches.delete(token),
            );
          }
        }
        answer.then(
          async (up) => {
            if (fault === "reset-after") {
              calls.push({ operation, service, ...accessKeyId, at, status: 0, fault });
              req.socket.destroy();
              return;
            }
            const call: ProxiedCall = { operation, service, ...accessKeyId, at, status: up.status };
            if (opts.resources === true) {
              const resource = resourceOf(
                service,
                req.url ?? "/",
                req.headers,
                body.toString("utf8"),
                ownHost,
              );
              if (resource !== undefined) call.resource = resource;
              call.answeredAt = Date.now();
            }
            calls.push(call);
            const hook = hooks.get(operation);
            if (hook !== undefined) {
              hooks.delete(operation);
              const verdict = await Promise.resolve(hook(call)).catch(() => "drop" as const);
              if (verdict === "drop") {
                req.socket.destroy();
                return;
              }
            }
            if (req.socket.destroyed) return;
            res.writeHead(up.status, up.headers);
            res.end(up.body);
          },
          (err: unknown) => {
            res.writeHead(502);
            res.end(String(err));
          },
        );
      };
      const delay = opts.latencyMs?.() ?? 0;
      if (delay > 0) setTimeout(handle, delay);
      else handle();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? "127.0.0.1", resolve));
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new Error("proxy has no port");
  ownHost = `${opts.host ?? "127.0.0.1"}:${addr.port}`;
  return {
    endpoint: `http://${opts.host ?? "127.0.0.1"}:${addr.port}`,
    calls,
    count: (op) => calls.filter((c) => c.operation === op).length,
    onResponse: (op, hook) => {
      hooks.set(op, hook);
    },
    setFaults: (p) => {
      plan = p;
    },
    faults: () => ({ ...injected }),
    launchReplays: () => replays,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const out of inFlight) out.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
