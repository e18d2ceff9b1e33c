#!/usr/bin/env bash
# The test suite drives real programs from Debian packages (headless Chromium for the GraphiQL
# browser test, redis-server and redis-sentinel for the scale-out and Redis failover tests, haproxy for the local cluster's load balancer,
# deploy/haproxy). Install the missing ones when we can (root with apt-get), else say what to install.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/redis-server ] || need+=(redis-server)
[ -x /usr/sbin/haproxy ] || need+=(haproxy)
[ -x /usr/bin/redis-sentinel ] || need+=(redis-sentinel)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "The tests need these Debian packages: ${need[*]}. Install them (apt-get install -y ${need[*]}) and run again." >&2
  exit 1
fi
echo "Installing Debian packages the tests need: ${need[*]} (once)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
