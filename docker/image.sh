#!/usr/bin/env bash
# `make image`: build docker/Dockerfile and run the image, on a machine with no Docker engine and no access to
# Docker Hub. Podman (as root) builds and runs it; `tuner spaces` and a two-trial synthetic sweep then run
# inside the image and must both succeed.
#
# The base: the Dockerfile's default, the official CUDA PyTorch image, comes from Docker Hub. This script makes
# a local stand-in instead, tuner-base:bookworm: Debian bookworm from the host's apt mirror (debootstrap), its
# Python 3.11 in a venv at /opt/venv first on PATH (so `python` and `pip` answer, as in the official image),
# and torch + torchvision from the wheels the host's pip resolves for pyproject.toml's ranges (local wheel
# files where pip is set up with them, else PyPI's CUDA builds; they run on CPU too).
#
# Everything podman keeps (its storage, the base image, the build's layer cache) lives under .image/
# (git-ignored): the base is made once, and again only when its recipe below or the torch ranges change.
#
#   TUNER_IMAGE=tuner:latest        the tag to build
#   TUNER_BASE=IMAGE                build on this base instead of the local one (e.g. docker.io/pytorch/pytorch:...)
#   TUNER_STORAGE_DRIVER=overlay    podman's storage driver; vfs where overlay mounts are refused (every layer
#                                   a full copy: far more disk than this image's 7.5 GB)
#   DEBIAN_MIRROR=URL               debootstrap's mirror [default: the host's apt source for bookworm]
#   PYTHON=python3                  the host Python whose pip fetches the torch wheels
#   BUILDAH_ISOLATION=chroot        for hosts where podman cannot create containers for RUN steps
#
# Use the built image with the same settings: CONTAINERS_CONF=docker/containers.conf
# CONTAINERS_STORAGE_CONF=.image/storage.conf podman run --rm tuner:latest sweep --help
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STATE="$ROOT/.image"
IMAGE="${TUNER_IMAGE:-tuner:latest}"
LOCAL_BASE="localhost/tuner-base:bookworm"
DRIVER="${TUNER_STORAGE_DRIVER:-overlay}"
PYTHON="${PYTHON:-python3}"
START=$SECONDS

say() { printf '\n== %s\n' "$*"; }
die() { printf 'image: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "podman runs as root here (its storage under .image/ is root's): run 'sudo make image'"

# --- tools -------------------------------------------------------------------------------------------------
need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]} (apt)"
    command -v apt-get >/dev/null 2>&1 || die "no apt-get: install ${need[*]} by hand"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# --- podman's settings: the repo's containers.conf, storage under .image/ --------------------------------------
mkdir -p "$STATE"
cat >"$STATE/storage.conf" <<EOF
# Written by docker/image.sh: podman's storage for this clone.
[storage]
driver = "$DRIVER"
graphroot = "$STATE/storage-$DRIVER"
runroot = "$STATE/run-$DRIVER"
EOF
export CONTAINERS_CONF="$ROOT/docker/containers.conf"
export CONTAINERS_STORAGE_CONF="$STATE/storage.conf"

# --- the local base ----------------------------------------------------------------------------------------
# torch and torchvision as pyproject.toml pins them ("torch>=2.3,<3").
mapfile -t TORCH_SPECS < <(grep -oE '"(torch|torchvision)[<>=!~][^"]*"' pyproject.toml | tr -d '"')
[ ${#TORCH_SPECS[@]} -eq 2 ] || die "could not read the torch and torchvision ranges from pyproject.toml"

debian_mirror() {
    # The first apt source for bookworm itself (not -security or -updates), one-line or deb822 format.
    local f uri
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        uri="$(awk '
            function flush() { if (uri != "" && hit) { print uri; found = 1; exit } uri = ""; hit = 0 }
            found       { exit }
            /^[ \t]*$/  { flush(); next }
            /^deb[ \t]/ { sub(/\[[^]]*\]/, ""); if ($3 == "bookworm") { print $2; found = 1; exit } }
            /^URIs:/    { uri = $2 }
            /^Suites:/  { for (i = 2; i <= NF; i++) if ($i == "bookworm") hit = 1 }
            END         { if (!found) flush() }
        ' "$f")"
        if [ -n "$uri" ]; then echo "$uri"; return; fi
    done
}

build_base() {
    local rootfs="$STATE/rootfs" wheels="$STATE/wheels" mirror
    mirror="${DEBIAN_MIRROR:-$(debian_mirror)}"
    mirror="${mirror:-http://deb.debian.org/debian}"

    # Commands inside the rootfs get a clean environment (no host PIP_* settings).
    inroot() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 chroot "$rootfs" "$@"; }

    say "base: debootstrap bookworm from $mirror"
    rm -rf "$rootfs"
    # libpython3.11-dev: Python's headers, which the official image's Python has too (a C extension that
    # pip builds from source needs them).
    debootstrap --variant=minbase --include=python3,python3-venv,libpython3.11-dev,ca-certificates \
        bookworm "$rootfs" "$mirror" >"$STATE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$STATE/debootstrap.log"; die "debootstrap failed (log: .image/debootstrap.log)"; }
    # The host's own CAs (a TLS-inspecting proxy's, a company's) so that pip inside the build reaches PyPI.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
        inroot update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the rootfs"
    fi

    say "base: wheels for pip ${TORCH_SPECS[*]} (cp311, manylinux x86_64)"
    # Bookworm's Python is 3.11 with glibc 2.36: ask for wheels that fit it, whatever the host's Python is.
    local plat=(--platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
    local v
    for v in $(seq 5 36); do plat+=(--platform "manylinux_2_${v}_x86_64"); done
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --only-binary=:all: "${plat[@]}" \
        --python-version 3.11 --implementation cp --abi cp311 -d "$wheels" pip "${TORCH_SPECS[@]}" \
        2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)  # a host index without some package: noise

    say "base: venv /opt/venv with $(cd "$wheels" && ls torch-*.whl torchvision-*.whl | tr '\n' ' ')"
    inroot /usr/bin/python3 -m venv /opt/venv
    mkdir -p "$rootfs/tmp/wheels"
    cp -l "$wheels"/*.whl "$rootfs/tmp/wheels/" 2>/dev/null || cp "$wheels"/*.whl "$rootfs/tmp/wheels/"
    inroot /opt/venv/bin/pip install --quiet --disable-pip-version-check --no-index \
        --find-links /tmp/wheels --upgrade pip "${TORCH_SPECS[@]}"
    rm -rf "$rootfs/tmp/wheels" "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*

    say "base: import as $LOCAL_BASE"
    tar --numeric-owner -C "$rootfs" -cf - . | podman import \
        --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt' \
        --change "LABEL tuner.base.recipe=$1" \
        --change 'CMD ["/bin/bash"]' \
        - "$LOCAL_BASE" >/dev/null
    rm -rf "$rootfs" "$wheels"
}

if [ -n "${TUNER_BASE:-}" ]; then
    BASE="$TUNER_BASE"
else
    BASE="$LOCAL_BASE"
    recipe="$({ declare -f build_base; printf '%s\n' "${TORCH_SPECS[@]}"; } | sha256sum | cut -c1-16)"
    have="$(podman image inspect --format '{{index .Labels "tuner.base.recipe"}}' "$LOCAL_BASE" 2>/dev/null || true)"
    if [ "$have" = "$recipe" ]; then
        say "base: $LOCAL_BASE is current (recipe $recipe)"
    else
        build_base "$recipe"
    fi
fi

# --- the image ---------------------------------------------------------------------------------------------
say "build: $IMAGE from docker/Dockerfile on $BASE"
podman build --network=host --build-arg BASE="$BASE" -f docker/Dockerfile -t "$IMAGE" .
podman image prune -f >/dev/null  # the layers an earlier build of the same tag left behind
podman images --filter reference="$IMAGE" --filter reference="$BASE"

# --- run it ------------------------------------------------------------------------------------------------
# No network: the sweep needs none, and Ray's ports stay inside the container. /results is the image's
# volume (an anonymous one, removed with the container).
run=(podman run --rm --network=none --shm-size=8g "$IMAGE")
say "run: tuner spaces"
"${run[@]}" spaces
say "run: a two-trial synthetic sweep"
"${run[@]}" sweep --space cifar_small --dataset synthetic --synthetic-size 512 \
    --num-samples 2 --max-epochs 1 --scheduler fifo --searcher random
say "image: $IMAGE built and ran in $((SECONDS - START))s"
