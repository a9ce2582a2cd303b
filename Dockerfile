# syntax=docker/dockerfile:1
#
# The kubeprovisioner operator image: `make docker-build IMG=<repo>:<tag>` for this machine, or
# `make docker-buildx IMG=<registry>/<repo>:<tag>` for linux/amd64 and linux/arm64.
# The Helm chart and config/manager expect exactly this layout: non-root uid 65532, read-only root
# filesystem, the CLI as entrypoint, writable /tmp provided by the pod.
#
# Node's major version matches the one the tests run on (hack/versions.env: NODE_VERSION).
ARG NODE_MAJOR=24
# The base images. The defaults are the upstream images; the tests, which cannot pull, pass
# stand-ins of the same layout built on the machine (test/support/image.ts, `make cluster`).
ARG BUILD_BASE=docker.io/library/node:${NODE_MAJOR}-slim
ARG RUNTIME_BASE=gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot

# The build stage produces only JavaScript (no native modules; install scripts are off), so it
# runs once on the build machine's platform, and only the runtime stage is per platform.

# ---- compile and bundle: tree-shaken ES modules, no node_modules at run time -----------------
# The entry point dist/kubeprovisioner.mjs and the chunks it imports on demand, dist/chunks/ (each
# AWS service's SDK client is one: hack/bundle.ts), without source maps.
FROM --platform=$BUILDPLATFORM ${BUILD_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY hack/bundle.ts ./hack/bundle.ts
RUN npx tsc -p tsconfig.build.json --noEmit && node hack/bundle.ts --no-source-maps

# ---- runtime: distroless Node, no shell, no package manager ---------------------------------
FROM ${RUNTIME_BASE}
LABEL org.opencontainers.image.title="kubeprovisioner" \
      org.opencontainers.image.description="Kubernetes operator for AWS EC2 instances, S3 buckets and SQS queues (compute.cloud.com/v1)" \
      org.opencontainers.image.licenses="Apache-2.0"
# The base runs as nonroot; /app and everything in it is made by root, so the process cannot
# change its own code even where the root filesystem is writable.
USER 0:0
WORKDIR /app
ENV NODE_ENV=production
# V8 heap flags: a 1 MiB semi-space makes V8 collect young objects before it grows the heap,
# which keeps the resident set near what the operator really holds (BENCHMARKS.md, "Memory"). No
# old-space ceiling is fixed here: at start the operator sizes it from the container's memory
# limit (docs/install.md, "Memory"), so `resources.limits.memory` is the one knob. The benchmarks
# run the bundle with exactly these flags, plus the ceiling the chart's default limit yields.
# Measured at idle and left out (BENCHMARKS.md, "Idle footprint"): --single-threaded-gc (nothing
# at idle, slower converges), --v8-pool-size (nothing), --max-opt=2 (no TurboFan: at most the
# 5 MiB of its own code pages, for slower hot paths).
ENV NODE_OPTIONS="--max-semi-space-size=1"
# glibc's malloc: at most two arenas instead of one per thread that allocates (V8's and libuv's
# worker threads), about 1 MiB less at idle and no slower converging (BENCHMARKS.md).
ENV MALLOC_ARENA_MAX=2
# The bundle (hack/bundle.ts) holds every dependency it uses; package.json gives the version.
COPY --from=build --chown=0:0 /src/package.json ./package.json
COPY --from=build --chown=0:0 /src/dist/kubeprovisioner.mjs ./dist/
COPY --from=build --chown=0:0 /src/dist/chunks ./dist/chunks
# Files are owned by root and read-only to the process; it runs as the distroless nonroot user.
USER 65532:65532
EXPOSE 8443 8081
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/kubeprovisioner.mjs"]
