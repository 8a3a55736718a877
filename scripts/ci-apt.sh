#!/usr/bin/env bash
# Debian packages the tests need (run as root by .ci/run): searx is the real metasearch engine
# the end-to-end tests query (SearXNG's predecessor, same JSON API, offline sqlite engine);
# sqlite3-doc and git-doc are the real third-party HTML doc sets `make eval` (and its fast
# subset in `make test`, tests/eval) serves as an offline web.
set -euo pipefail
need=()
[ -f /usr/share/doc/searx/examples/settings.yml ] || need+=(searx)
[ -f /usr/share/doc/sqlite3/limits.html ] || need+=(sqlite3-doc)
[ -f /usr/share/doc/git-doc/git-gc.html ] || need+=(git-doc)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ci-apt: missing Debian packages: ${need[*]} (run as root: apt-get install -y ${need[*]})" >&2
    exit 1
  fi
  echo ">> apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
