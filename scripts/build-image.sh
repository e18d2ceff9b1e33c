#!/usr/bin/env bash
# Builds deploy/Containerfile with Debian's buildah where Docker Hub cannot be reached: the base
# is Debian bookworm made by debootstrap, with the Node.js running this script copied in
# (bookworm's nodejs is 18, too old), then runs the image once and queries it.
# Outside the test suite: needs root, the Debian mirror (debootstrap) and the npm registry
# (the image's `npm ci`). Prints what it measured; exits non-zero on the first failure.
#
#   sudo scripts/build-image.sh [--no-run]
#
# Environment: MIRROR (http://deb.debian.org/debian), SUITE (bookworm), WORK (/var/tmp/vg-image:
# the debootstrap'd root is kept there and reused), PORT (the run's host port, 14000),
# IMAGE (localhost/volume-gateway:<version>), HOST_CA (a CA bundle npm in the build should trust;
# default: this machine's npm cafile).
set -euo pipefail
cd "$(dirname "$0")/.."

MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}
WORK=${WORK:-/var/tmp/vg-image}
PORT=${PORT:-14000}
VERSION=$(node -p "require('./package.json').version")
IMAGE=${IMAGE:-localhost/volume-gateway:$VERSION}
NODE_VERSION=$(node -p 'process.versions.node')
BASE=localhost/vg-node-base:$SUITE-node$NODE_VERSION
RUN=1
[ "${1:-}" = "--no-run" ] && RUN=0

# vfs and chroot isolation: no overlay mounts or user namespaces needed (they are not here).
B=(buildah --storage-driver vfs)
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }

if [ "$(id -u)" != 0 ]; then echo "build-image.sh: run as root (buildah with chroot isolation, debootstrap)" >&2; exit 1; fi
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
mkdir -p "$WORK"

step "npm pack"
rm -rf "$WORK/context" && mkdir -p "$WORK/context"
npm pack --pack-destination "$WORK/context" >/dev/null
ls -l "$WORK/context"

if ! "${B[@]}" inspect --type image "$BASE" >/dev/null 2>&1; then
  rootfs=$WORK/rootfs-$SUITE
  if [ ! -x "$rootfs/bin/sh" ]; then
    step "debootstrap --variant=minbase $SUITE from $MIRROR"
    rm -rf "$rootfs"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR"
  fi
  step "base image $BASE: $SUITE + node $NODE_VERSION and npm from this machine"
  node_bin=$(readlink -f "$(command -v node)")
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  rm -rf "$rootfs/usr/local/lib/node_modules/npm"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  # Nothing of apt's caches in the image.
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  ctr=$("${B[@]}" from scratch)
  "${B[@]}" copy "$ctr" "$rootfs/" / >/dev/null
  "${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["node"]' "$ctr"
  "${B[@]}" commit --format docker "$ctr" "$BASE" >/dev/null
  "${B[@]}" rm "$ctr" >/dev/null
fi

# Behind a TLS-intercepting proxy the registry's certificate chain ends at a local CA, which this
# machine's npm trusts through its `cafile`: lend that file and an npmrc naming it to the build's
# RUN steps as read-only mounts, so neither ends up in the image.
mounts=()
cafile=${HOST_CA:-$(npm config get cafile 2>/dev/null || true)}
if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then
  printf 'cafile=/etc/ssl/certs/host-ca.pem\n' > "$WORK/npmrc"
  mounts=(-v "$cafile:/etc/ssl/certs/host-ca.pem:ro" -v "$WORK/npmrc:/usr/local/etc/npmrc:ro")
  echo "npm in the build trusts $cafile (this machine's npm cafile), mounted for the build only"
fi

step "buildah bud deploy/Containerfile (FROM $BASE)"
start=$(date +%s)
"${B[@]}" bud --isolation chroot --format docker --layers=false "${mounts[@]}" \
  --build-arg "NODE_IMAGE=$BASE" -f deploy/Containerfile -t "$IMAGE" "$WORK/context"
echo "built $IMAGE in $(( $(date +%s) - start )) s"
"${B[@]}" images "$IMAGE"
"${B[@]}" inspect --type image --format '{{.Docker.Config.User}} {{.Docker.Config.Entrypoint}} healthcheck={{.Docker.Config.Healthcheck.Test}}' "$IMAGE"

[ "$RUN" = 1 ] || exit 0

step "run $IMAGE once, as its user on its root filesystem mounted read-only, and query it"
# podman/crun cannot start a container here (crun: setrlimit RLIMIT_NOFILE/RLIMIT_NPROC: Operation
# not permitted, whatever --ulimit says), so the run is done by hand: the image's root mounted
# read-only in a private mount namespace, a tmpfs at /tmp, the image's environment and user,
# chroot, host network.
ctr=$("${B[@]}" from "$IMAGE")
mnt=$("${B[@]}" mount "$ctr")
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; "${B[@]}" umount "$ctr" >/dev/null 2>&1; "${B[@]}" rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT
read -r -a image_env <<< "$("${B[@]}" inspect --type image --format '{{range .Docker.Config.Env}}{{.}} {{end}}' "$IMAGE")"
user=$("${B[@]}" inspect --type image --format '{{.Docker.Config.User}}' "$IMAGE")
chroot_bin=$(command -v chroot)
unshare -m sh -c '
  set -e
  mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"
  mount -t proc proc "$1/proc" && mount -t tmpfs -o size=16m tmpfs "$1/tmp"
  if touch "$1/opt/probe" 2>/dev/null; then echo "root filesystem is writable" >&2; exit 1; fi
  root=$1 user=$2 chroot_bin=$3; shift 3
  exec env -i "$@" "$chroot_bin" --userspec="$user" "$root" node /opt/volume-gateway/dist/server/main.js
' sh "$mnt" "$user" "$chroot_bin" "${image_env[@]}" PORT="$PORT" GATEWAY_BACKENDS=lab=memory LOG_LEVEL=warn > "$WORK/run.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do
  grep -q 'ready at' "$WORK/run.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$WORK/run.log"; exit 1; }
  sleep 0.2
done
cat "$WORK/run.log"
curl -fsS "http://127.0.0.1:$PORT/healthz"; echo
curl -fsS -o /dev/null -w 'readyz %{http_code}\n' "http://127.0.0.1:$PORT/readyz"
curl -fsS -H 'content-type: application/json' -H 'x-memory-token: lab-admin' \
  -d '{"query":"{ volumes(first: 3) { nodes { id name backend { id } } } }"}' "http://127.0.0.1:$PORT/graphql"; echo
# The image's HEALTHCHECK command, run inside the image (buildah run: its user and environment).
"${B[@]}" run --isolation chroot --env PORT="$PORT" "$ctr" -- \
  node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" \
  && echo "HEALTHCHECK command: exit 0"
