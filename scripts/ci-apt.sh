#!/usr/bin/env bash
# Debian packages the tests need (run as root by .ci/run): searx is the real metasearch engine
# the end-to-end tests query (SearXNG's predecessor, same JSON API, offline sqlite engine).
# chromium is the browser the web UI's tests (tests/ui) drive through Playwright.
set -euo pipefail
need=()
[ -f /usr/share/doc/searx/examples/settings.yml ] || need+=(searx)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ci-apt: missing Debian packages: ${need[*]} (run as root: apt-get install -y ${need[*]})" >&2
    exit 1
  fi
  echo ">> apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
