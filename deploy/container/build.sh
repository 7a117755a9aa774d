#!/bin/sh
# Builds the ringd image from a staged root file system (Containerfile):
#   deploy/container/build.sh [IMAGE]     (default localhost/ringd:latest)
# Needs podman (or buildah with BUILDER=buildah) and no registry.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
image=${1:-localhost/ringd:latest}
builder=${BUILDER:-podman}
swift=${SWIFT:-swift}

cd "$repo"
"$swift" build -c release --product ringd
binary="$("$swift" build -c release --show-bin-path)/ringd"

context=$(mktemp -d "${TMPDIR:-/tmp}/ringd-image.XXXXXX")
trap 'rm -rf "$context"' EXIT
rootfs="$context/rootfs"
mkdir -p "$rootfs/etc/ringd" "$rootfs/etc/ssl/certs" "$rootfs/var/lib" "$context/state"

cp "$binary" "$rootfs/ringd"
# Every library the binary loads, and the loader, at the paths ldd found
# them (the binary's RUNPATH and the loader's default directories).
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while read -r library; do
    mkdir -p "$rootfs$(dirname "$library")"
    cp -L "$library" "$rootfs$library"
  done
# For webhooks and push over HTTPS.
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
cp deploy/config/production.json "$rootfs/etc/ringd/config.json"
printf 'root:x:0:0:root:/:/sbin/nologin\nringd:x:10001:10001:ringd:/var/lib/ringd:/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nringd:x:10001:\n' > "$rootfs/etc/group"

case "$builder" in
  buildah) buildah bud -f deploy/container/Containerfile -t "$image" "$context" ;;
  *) podman build -f deploy/container/Containerfile -t "$image" "$context" ;;
esac
