import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ApiError,
  TransportError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isRetryable,
  isTooManyRequests,
} from "./errors.ts";

const status = (code: number, reason: string, message = `${reason} happened`): string =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message });

describe("ApiError", () => {
  it("parses a metav1.Status body into reason and message", () => {
    const e = ApiError.fromResponse({
      status: 404,
      text: status(404, "NotFound", 'configmaps "x" not found'),
      method: "GET",
      path: "/api/v1/x",
    });
    assert.equal(e.status, 404);
    assert.equal(e.reason, "NotFound");
    assert.equal(e.message, 'GET /api/v1/x: configmaps "x" not found');
    assert.equal(e.statusObject?.code, 404);
  });

  it("removes the request's own credentials from the message and the body", () => {
    const token = "tok-planted-0123456789";
    const e = ApiError.fromResponse({
      status: 401,
      text: status(401, "Unauthorized", `token "${token}" is not valid`),
      method: "GET",
      path: "/api/v1/x",
      secrets: [token],
    });
    assert.equal(e.message, 'GET /api/v1/x: token "[redacted]" is not valid');
    assert.equal(e.statusObject?.message, 'token "[redacted]" is not valid');
    assert.ok(!String(e.stack).includes(token));
    const echo = ApiError.fromResponse({ status: 401, text: `rejected Bearer ${token}`, secrets: [token] });
    assert.equal(echo.body, "rejected Bearer [redacted]");
  });

  it("keeps a non-JSON body as text and still classifies by status", () => {
    const e = ApiError.fromResponse({ status: 503, text: "<html>bad gateway</html>", retryAfterHeader: "7" });
    assert.equal(e.reason, "");
    assert.equal(e.body, "<html>bad gateway</html>");
    assert.equal(e.retryAfterSeconds, 7);
    assert.ok(isRetryable(e));
  });

  it("takes retryAfterSeconds from Status.details when there is no header", () => {
    const body = JSON.stringify({
      kind: "Status",
      code: 429,
      reason: "TooManyRequests",
      details: { retryAfterSeconds: 3 },
    });
    const e = ApiError.fromResponse({ status: 429, text: body });
    assert.equal(e.retryAfterSeconds, 3);
    assert.ok(isTooManyRequests(e));
  });

  it("turns a watch ERROR Status into a Gone error", () => {
    const e = ApiError.fromStatus({
      kind: "Status",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 1 (20)",
    });
    assert.ok(isGone(e));
    assert.match(e.message, /too old resource version/);
  });
});

describe("error predicates", () => {
  const err = (code: number, reason: string): ApiError =>
    ApiError.fromResponse({ status: code, text: status(code, reason) });
  it("tell conflicts from already-exists", () => {
    assert.ok(isConflict(err(409, "Conflict")));
    assert.ok(!isConflict(err(409, "AlreadyExists")));
    assert.ok(isAlreadyExists(err(409, "AlreadyExists")));
    assert.ok(!isAlreadyExists(err(409, "Conflict")));
  });
  it("classify the common statuses and reject non-ApiErrors", () => {
    assert.ok(isNotFound(err(404, "NotFound")));
    assert.ok(isForbidden(err(403, "Forbidden")));
    assert.ok(isInvalid(err(422, "Invalid")));
    assert.ok(isGone(err(410, "Gone")));
    for (const f of [isNotFound, isConflict, isAlreadyExists, isGone, isForbidden, isInvalid]) {
      assert.equal(f(new Error("404")), false);
      assert.equal(f(undefined), false);
    }
  });
  it("call transport failures and 5xx retryable, validation and RBAC errors not", () => {
    assert.ok(
      isRetryable(new TransportError({ failure: "reset", method: "GET", path: "/", message: "reset" })),
    );
    assert.ok(isRetryable(err(500, "InternalError")));
    assert.ok(!isRetryable(err(422, "Invalid")));
    assert.ok(!isRetryable(err(403, "Forbidden")));
    assert.ok(!isRetryable(new Error("boom")));
  });
});
