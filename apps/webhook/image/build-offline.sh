#!/usr/bin/env bash
# Builds Signet's container image offline, from the repository root or anywhere:
#   apps/webhook/image/build-offline.sh [TAG]            (default TAG: signet:dev)
# Needs: Debian's mmdebstrap (apt-get install -y mmdebstrap), a Docker engine (DOCKER_HOST), and
# the repository installed (`pnpm install`). Nothing is pulled from a registry: the base is made
# from the machine's apt sources, Node is the pinned npm `node` package's binary. With Docker Hub
# access, `docker build -f apps/webhook/Dockerfile .` builds the same layout from node:26-slim.
set -euo pipefail
# pnpm treats a NODE_ENV it did not install with (a test runner's NODE_ENV=test) as a reason to
# re-install the workspace, dropping its devDependencies: run its commands without one.
unset NODE_ENV
tag=${1:-signet:dev}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
started=$SECONDS
step() { printf 'build-offline: [%3ss] %s\n' "$((SECONDS - started))" "$*"; }

for program in mmdebstrap docker pnpm; do
  command -v "$program" >/dev/null || { echo "build-offline: $program is not installed" >&2; exit 1; }
done

context=$(mktemp -d "${TMPDIR:-/tmp}/signet-image-XXXXXX")
trap 'rm -rf "$context"' EXIT

# The machine's apt sources (deb822 *.sources and sources.list) and suite: the only mirror it reaches.
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
sources=()
[ -s /etc/apt/sources.list ] && grep -qE '^\s*deb\s' /etc/apt/sources.list && sources+=(/etc/apt/sources.list)
for file in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
  [ -e "$file" ] && sources+=("$file")
done

step "base: mmdebstrap --variant=extract (libc6 libstdc++6 libgcc-s1 libatomic1, $suite)"
# extract: the packages' files only (no maintainer scripts, no shell, no package manager).
mmdebstrap --quiet --variant=extract --include=libc6,libstdc++6,libgcc-s1,libatomic1 \
  --dpkgopt='path-exclude=/usr/share/*' "$suite" "$context/rootfs" "${sources[@]}"
rm -rf "$context/rootfs/var/lib/dpkg" "$context/rootfs/var/lib/apt" "$context/rootfs/var/cache" "$context/rootfs/usr/lib/x86_64-linux-gnu/gconv"
# distroless-style accounts: root, and nonroot 65532 the process runs as.
mkdir -p "$context/rootfs/etc" "$context/rootfs/tmp" "$context/rootfs/home/nonroot"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$context/rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$context/rootfs/etc/group"
chmod 1777 "$context/rootfs/tmp"
chown 65532:65532 "$context/rootfs/home/nonroot"

step "node: $(cd "$repo" && pnpm exec node --version) from the pinned npm package"
node_binary=$(cd "$repo" && pnpm exec node -p 'require("node:fs").realpathSync(process.execPath)')
cp "$node_binary" "$context/node"

step "app: build @signet/webhook and pnpm deploy --prod"
(cd "$repo" && pnpm exec turbo run build --filter=@signet/webhook... --output-logs=errors-only >/dev/null)
# pnpm 12's deploy overwrites the workspace's install state (node_modules/.pnpm-workspace-state-v1.json)
# with the deployed project's: the next `pnpm exec` would then re-install the workspace without its
# devDependencies. Keep the workspace's own state.
state="$repo/node_modules/.pnpm-workspace-state-v1.json"
[ -f "$state" ] && cp "$state" "$context/workspace-state.json"
(cd "$repo" && pnpm --filter @signet/webhook deploy --prod --legacy "$context/app" >/dev/null)
[ -f "$context/workspace-state.json" ] && cp "$context/workspace-state.json" "$state"
rm -f "$context/workspace-state.json"

step "docker build -t $tag (Dockerfile.offline, FROM scratch)"
DOCKER_BUILDKIT=0 docker build --quiet --network none --tag "$tag" --file "$here/Dockerfile.offline" "$context" >/dev/null
size=$(docker image inspect --format '{{.Size}}' "$tag")
step "built $tag: $((size / 1024 / 1024)) MiB"
