/**
 * `make image`: the images the node tests load, built into the tool cache before any test file
 * starts (test/support/image.ts): the operator image from the Dockerfile with the stand-in base
 * images, cached by a hash of what it is built from, and the pod sandbox image of bin/pause.
 * When both are cached for the working tree as it is, this only computes the hash. `make test`
 * runs it beside `make lint`; `make test-e2e`, `make test-cluster` and `make cluster` before
 * their own step. The tests never build an image: one that finds it missing fails at once,
 * naming this target.
 */
import { buildImage, buildPauseImage } from "../test/support/image.ts";

const say = (msg: string): void => {
  process.stderr.write(`[image] ${msg}\n`);
};

const started = Date.now();
try {
  const image = await buildImage({ log: (l) => say(l) });
  const pause = await buildPauseImage({ log: (l) => say(l) });
  const seconds = Math.round((Date.now() - started) / 1000);
  say(
    `${image.ref}: ${(image.sizeBytes / 1024 / 1024).toFixed(0)} MiB, ` +
      `${image.cached ? "cached" : `built in ${seconds} s`} (${image.archive}); sandbox image ${pause.ref}`,
  );
} catch (err) {
  say(`building the images failed: ${(err as Error).message}`);
  process.exit(1);
}
