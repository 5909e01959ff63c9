#!/usr/bin/env bash
# Copyright 2026 The Koord Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Builds koordlet for an image: with cgo, because it loads the NVIDIA driver's NVML library at run time (GPU
# discovery), against glibc, whose loader and libraries hack/images puts in the image. The Go resolvers stay
# (netgo, osusergo), so the image needs no NSS configuration.
#
#   hack/build-koordlet.sh <os> <arch> <output directory> <ldflags>
#
# For the build machine's own architecture the C compiler is $CC (default gcc); for another it is Debian's
# cross compiler <triplet>-gcc, e.g. aarch64-linux-gnu-gcc from gcc-aarch64-linux-gnu and libc6-dev-arm64-cross.
set -euo pipefail

os=$1 arch=$2 out=$3 ldflags=$4
go=${GO:-go}

case "$arch" in
  amd64) triplet=x86_64-linux-gnu debarch=amd64 ;;
  arm64) triplet=aarch64-linux-gnu debarch=arm64 ;;
  ppc64le) triplet=powerpc64le-linux-gnu debarch=ppc64el ;;
  s390x) triplet=s390x-linux-gnu debarch=s390x ;;
  *) echo "koordlet for $os/$arch: no C toolchain known for $arch (amd64, arm64, ppc64le, s390x)" >&2; exit 1 ;;
esac

if [ "$arch" = "$("$go" env GOHOSTARCH)" ]; then
  cc=${CC:-gcc}
else
  cc=$triplet-gcc
fi
if ! command -v "$cc" >/dev/null; then
  echo "koordlet for $os/$arch is built with cgo (it loads NVML) and needs the C compiler $cc:" >&2
  echo "  apt-get install gcc-${triplet//_/-} libc6-dev-$debarch-cross   (or build for fewer platforms: IMAGE_PLATFORMS=linux/$("$go" env GOHOSTARCH))" >&2
  exit 1
fi

CGO_ENABLED=1 CC=$cc GOOS=$os GOARCH=$arch "$go" build -tags netgo,osusergo -trimpath -ldflags "$ldflags" -o "$out" ./cmd/koordlet
