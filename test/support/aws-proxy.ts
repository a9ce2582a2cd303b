/**
 * An HTTP proxy in front of the AWS emulator that names every call it forwards (`RunInstances`,
 * `CreateQueue`, `CreateBucket`, ...) and can hold back a response: the call still happens in the
 * emulator, but the client never hears of it. That is exactly a process dying between an AWS
 * create and the status write that would record it.
 */
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";

/** One forwarded call. */
export interface ProxiedCall {
  operation: string;
  status: number;
}

/**
 * What to do when a matching call's response comes back; a promise holds the response back until
 * it settles (the call is in flight for the client all that time).
 */
export type ResponseHook = (call: ProxiedCall) => "deliver" | "drop" | Promise<"deliver" | "drop">;

/** Whether a call may go on to the emulator, or is answered as throttled instead. */
export type RequestGate = (operation: string, body: string) => "forward" | "throttle";

/** Options of {@link startAwsProxy}. */
export interface AwsProxyOptions {
  /** Milliseconds to hold each call before forwarding it, drawn per call. */
  latencyMs?: () => number;
  /** Refuses calls with EC2's throttling answer; they are recorded with status 503. */
  gate?: RequestGate;
}

/** EC2's answer to a call whose throttling bucket is empty. */
const REQUEST_LIMIT_EXCEEDED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>RequestLimitExceeded</Code>' +
  "<Message>Request limit exceeded.</Message></Error></Errors><RequestID>throttled</RequestID></Response>";

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

/** Starts a proxy to `target` (the emulator's endpoint) on a free loopback port. */
export async function startAwsProxy(target: string, opts: AwsProxyOptions = {}): Promise<AwsProxy> {
  const calls: ProxiedCall[] = [];
  const hooks = new Map<string, ResponseHook>();
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const operation = operationOf(req.method ?? "GET", req.url ?? "/", req.headers, body.toString("utf8"));
      const delay = opts.latencyMs?.() ?? 0;
      if (delay > 0) setTimeout(() => forward(req, res, body, operation), delay);
      else forward(req, res, body, operation);
    });
  });
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, operation: string): void => {
    if (opts.gate?.(operation, body.toString("utf8")) === "throttle") {
      calls.push({ operation, status: 503 });
      res.writeHead(503, { "content-type": "text/xml" });
      res.end(REQUEST_LIMIT_EXCEEDED);
      return;
    }
    const out = request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (up) => {
        const upChunks: Buffer[] = [];
        up.on("data", (c: Buffer) => upChunks.push(c));
        up.on("end", () => {
          const call = { operation, status: up.statusCode ?? 0 };
          calls.push(call);
          const hook = hooks.get(operation);
          hooks.delete(operation);
          const answer = (verdict: "deliver" | "drop"): void => {
            if (verdict === "drop") {
              req.socket.destroy();
              return;
            }
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(Buffer.concat(upChunks));
          };
          const verdict = hook?.(call) ?? "deliver";
          if (typeof verdict === "string") answer(verdict);
          else void verdict.then(answer, () => answer("drop"));
        });
      },
    );
    out.on("error", (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    out.end(body);
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new Error("proxy has no port");
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    calls,
    count: (op) => calls.filter((c) => c.operation === op).length,
    onResponse: (op, hook) => {
      hooks.set(op, hook);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
