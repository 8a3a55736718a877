#!/usr/bin/env bash
# The Debian packages `make` needs beyond Python 3.11 and make itself, by purpose:
#   build: g++ compiles llama-cpp-python (the embedded LLM server) in `make setup`;
#   test:  searx is the real metasearch engine the end-to-end tests query (SearXNG's predecessor,
#          same JSON API, offline sqlite engine); sqlite3-doc, git-doc, postfix-doc and
#          zsh-doc (tuning) and apache2-doc and ffmpeg-doc (held-out) are the real third-party HTML doc sets
#          `make eval` (and its fast subset in tests/eval) serves as an offline web; chromium is the browser the web UI's tests (tests/ui) drive through
#          Playwright (never a downloaded browser); postgresql (15) and redis-server are the real
#          shared datastores the scaling-out tests start and stop themselves (tests/datastores.py).
#
# usage: scripts/system-packages.sh [--check] build|test
# As root it installs what is missing (apt-get update first: a fresh image has no package
# lists). Otherwise, or with --check, it installs nothing: it prints the one command that would,
# and exits 1 so `make` stops before running anything that needs them.
set -euo pipefail

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
case "${1:-}" in
  build) wanted=(g++) target="make setup" ;;
  test) wanted=(g++ searx sqlite3-doc git-doc postfix-doc zsh-doc apache2-doc ffmpeg-doc chromium postgresql redis-server) target="make test" ;;
  *) echo "usage: $0 [--check] build|test" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null; then
  echo "system-packages: not a Debian system (no dpkg-query); \`$target\` needs the equivalents" \
    "of Debian's ${wanted[*]}" >&2
  exit 1
fi

# "rc" (removed, its configuration kept) is not installed: only "install ok installed" counts.
need=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$check" = 1 ] || [ "$(id -u)" != 0 ]; then
  echo "system-packages: \`$target\` needs Debian packages that are missing: ${need[*]}" >&2
  echo "Install them with this command (as root, \`$target\` does it itself), then run it again:" >&2
  echo "sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi

echo ">> installing Debian packages: ${need[*]}"
# Wait for a dpkg lock held by another apt run instead of failing at once.
apt_get=(apt-get -qq -o DPkg::Lock::Timeout=300)
"${apt_get[@]}" update
DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y "${need[@]}" >/dev/null
