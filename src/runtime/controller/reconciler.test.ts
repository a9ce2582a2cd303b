import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TerminalError, isPanicLike, isTerminalError } from "./reconciler.ts";

describe("isTerminalError", () => {
  it("recognises a TerminalError and one anywhere in the cause chain", () => {
    assert.equal(isTerminalError(new TerminalError("x")), true);
    assert.equal(
      isTerminalError(new Error("outer", { cause: new Error("mid", { cause: new TerminalError("x") }) })),
      true,
    );
  });
  it("rejects ordinary errors, non-errors and cyclic cause chains without looping", () => {
    assert.equal(isTerminalError(new Error("x")), false);
    assert.equal(isTerminalError("TerminalError"), false);
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    assert.equal(isTerminalError(a), false);
  });
  it("keeps the cause it was given", () => {
    const cause = new Error("root");
    assert.equal(new TerminalError("x", { cause }).cause, cause);
  });
});

describe("isPanicLike", () => {
  it("flags programming errors and thrown non-errors", () => {
    let typeError: unknown;
    try {
      (undefined as unknown as { a: number }).a.toString();
    } catch (err) {
      typeError = err;
    }
    assert.equal(isPanicLike(typeError), true);
    assert.equal(isPanicLike(new ReferenceError("x")), true);
    assert.equal(isPanicLike(new RangeError("Maximum call stack size exceeded")), true);
    assert.equal(isPanicLike("a string"), true);
    assert.equal(isPanicLike(undefined), true);
  });
  it("does not flag operational failures", () => {
    assert.equal(isPanicLike(new Error("AWS throttled")), false);
    assert.equal(isPanicLike(new TypeError("fetch failed", { cause: new Error("ECONNREFUSED") })), false);
    assert.equal(isPanicLike(new TerminalError("bad spec")), false);
  });
});
