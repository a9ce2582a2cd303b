import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Counter, Histogram, Registry } from "prom-client";
import { metricSamples, metricValue, parseMetrics, registrySum, registryValue } from "./prometheus-text.ts";

function registry(): Registry {
  const r = new Registry();
  const c = new Counter({
    name: "t_requests_total",
    help: "h",
    labelNames: ["code", "path"],
    registers: [r],
  });
  c.inc({ code: "200", path: '/a"b' }, 2);
  c.inc({ code: "200", path: "/c" }, 3);
  c.inc({ code: "500", path: "/c" });
  new Counter({ name: "t_untouched_total", help: "h", labelNames: ["code"], registers: [r] });
  const h = new Histogram({ name: "t_seconds", help: "h", buckets: [0.1, 1], registers: [r] });
  h.observe(0.5);
  return r;
}

describe("Prometheus text reader", () => {
  it("sums the series whose labels include the given ones, label values unescaped", async () => {
    const r = registry();
    assert.equal(await registryValue(r, "t_requests_total"), 6);
    assert.equal(await registryValue(r, "t_requests_total", { code: "200" }), 5);
    assert.equal(await registryValue(r, "t_requests_total", { path: '/a"b' }), 2);
    assert.equal(await registryValue(r, "t_requests_total", { code: "404" }), undefined);
    assert.equal(await registrySum(r, "t_requests_total", { code: "404" }), 0);
  });

  it("reads histogram series by their sample names", async () => {
    const text = await registry().metrics();
    assert.equal(metricValue(text, "t_seconds_count"), 1);
    assert.equal(metricValue(text, "t_seconds_bucket", { le: "0.1" }), 0);
    assert.equal(metricValue(text, "t_seconds_bucket", { le: "+Inf" }), 1);
    assert.equal(metricSamples(text, "t_seconds_bucket").length, 3);
  });

  it("tells a registered metric without series from a name nothing exposes", async () => {
    const r = registry();
    assert.equal(await registryValue(r, "t_untouched_total"), undefined);
    await assert.rejects(registryValue(r, "t_requests"), /no metric t_requests is exposed/);
    await assert.rejects(registrySum(r, "t_seconds_total"), /no metric t_seconds_total is exposed/);
  });

  it("reads one sample name's lines alone, not those of names it is a prefix of", async () => {
    const text = `${await registry().metrics()}t_broken{code="200" 1\n`;
    assert.throws(() => parseMetrics(text), /not a Prometheus text sample/);
    assert.equal(metricValue(text, "t_requests_total", { code: "200" }), 5);
    assert.equal(metricValue(text, "t_seconds_sum"), 0.5);
    assert.throws(() => metricValue(text, "t_broken"), /not a Prometheus text sample/);
    assert.deepEqual(
      parseMetrics(text, "t_seconds").samples,
      [],
      "t_seconds_bucket, _sum and _count are other sample names",
    );
  });
});
