#!/usr/bin/env bash
# Builds Signet's container image offline, from the repository root or anywhere:
#   apps/webhook/image/build-offline.sh [TAG] [--attestations DIR]      (default TAG: signet:dev)
# The image is labelled with Signet's version (@signet/webhook's, which every version follows) and
# its source commit. With --attestations, DIR also gets what a release attaches to the image:
# sbom.cdx.json (CycloneDX, made by `pnpm sbom` from the app's production dependencies and checked
# against the app the image carries) and provenance.json (a SLSA v1 provenance predicate of this
# build's inputs: commit, Node binary, each Debian package, lockfile, Dockerfile); see
# docs/releasing.md for signing and attaching them with cosign.
# Needs: Debian's mmdebstrap (apt-get install -y mmdebstrap), a Docker engine (DOCKER_HOST), and
# the repository installed (`pnpm install`). Nothing is pulled from a registry: the base is made
# from the machine's apt sources, Node is the pinned npm `node` package's binary. With Docker Hub
# access, `docker build -f apps/webhook/Dockerfile .` builds the same layout from node:26-slim.
set -euo pipefail
# pnpm treats a NODE_ENV it did not install with (a test runner's NODE_ENV=test) as a reason to
# re-install the workspace, dropping its devDependencies: run its commands without one.
unset NODE_ENV
tag=signet:dev
attestations=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --attestations) attestations=${2:?--attestations needs a directory}; shift 2 ;;
    -*) echo "build-offline: unknown option $1" >&2; exit 2 ;;
    *) tag=$1; shift ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
started=$SECONDS
started_on=$(date -u +%Y-%m-%dT%H:%M:%SZ)
step() { printf 'build-offline: [%3ss] %s\n' "$((SECONDS - started))" "$*"; }

for program in mmdebstrap docker pnpm git; do
  command -v "$program" >/dev/null || { echo "build-offline: $program is not installed" >&2; exit 1; }
done

context=$(mktemp -d "${TMPDIR:-/tmp}/signet-image-XXXXXX")
debs=$(mktemp -d "${TMPDIR:-/tmp}/signet-image-debs-XXXXXX")
trap 'rm -rf "$context" "$debs"' EXIT

# The machine's apt sources (deb822 *.sources and sources.list) and suite: the only mirror it reaches.
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
sources=()
[ -s /etc/apt/sources.list ] && grep -qE '^\s*deb\s' /etc/apt/sources.list && sources+=(/etc/apt/sources.list)
for file in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
  [ -e "$file" ] && sources+=("$file")
done

step "base: mmdebstrap --variant=extract (libc6 libstdc++6 libgcc-s1 libatomic1, $suite)"
# extract: the packages' files only (no maintainer scripts, no shell, no package manager). The
# downloaded .deb files are kept for the provenance (their SHA-256), then left out of the image.
mmdebstrap --quiet --variant=extract --include=libc6,libstdc++6,libgcc-s1,libatomic1 \
  --skip=cleanup/apt/cache --dpkgopt='path-exclude=/usr/share/*' "$suite" "$context/rootfs" "${sources[@]}"
mv "$context/rootfs/var/cache/apt/archives/"*.deb "$debs/"
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
# Filled inside the image build (Dockerfile.offline), where its paths and user are the image's.
mkdir "$context/compile-cache"

# The one version: @signet/webhook's (changesets keeps the libraries and the chart on it).
version=$(cd "$repo" && pnpm exec node -p 'require("./apps/webhook/package.json").version')
revision=$(git -C "$repo" rev-parse HEAD)
step "docker build -t $tag (Dockerfile.offline, FROM scratch), version $version, revision ${revision:0:12}"
DOCKER_BUILDKIT=0 docker build --quiet --network none --tag "$tag" --file "$here/Dockerfile.offline" \
  --build-arg "SIGNET_VERSION=$version" --build-arg "SIGNET_REVISION=$revision" "$context" >/dev/null
size=$(docker image inspect --format '{{.Size}}' "$tag")
step "built $tag: $((size / 1024 / 1024)) MiB"

if [ -n "$attestations" ]; then
  mkdir -p "$attestations"
  step "SBOM: pnpm sbom (CycloneDX) of @signet/webhook's production dependencies"
  (cd "$repo" && pnpm --silent --filter @signet/webhook sbom --prod --sbom-format cyclonedx \
    --sbom-type application >"$attestations/sbom.cdx.json")
  step "provenance: SLSA v1 predicate of this build's inputs"
  tools=$(printf '{"pnpm":"%s","docker":"%s","mmdebstrap":"%s"}' "$(pnpm --version)" \
    "$(docker version --format '{{.Server.Version}}')" "$(mmdebstrap --version | awk '{print $2}')")
  (cd "$repo" && pnpm exec node apps/webhook/scripts/image-attestations.ts --context "$context" \
    --debs "$debs" --out "$attestations" --repo "$repo" --image-id "$(docker image inspect --format '{{.Id}}' "$tag")" \
    --tag "$tag" --started "$started_on" --builder-versions "$tools")
fi
