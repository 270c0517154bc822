#!/usr/bin/env bash
# Stages the GPU build kit into .gpu/ (../shared/gpu/stage.sh) and adds the Debian packages the
# kit lacks but drkernel needs (SQLite, libseccomp, CLI11, nlohmann-json, libsodium's headers: the kit has
# only its runtime libsodium23; spdlog and the libfmt it is built against, headers and shared libraries),
# downloaded here with apt-get: the GPU machine has no package registry. Run once per checkout before
# a device run that carries .gpu.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bash "$root/../shared/gpu/stage.sh"
cd "$root/.gpu"
for package in libsqlite3-dev libsqlite3-0 libseccomp-dev libseccomp2 libcli11-dev nlohmann-json3-dev libsodium-dev libssl-dev \
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9; do
  ls "${package}"_*.deb >/dev/null 2>&1 || apt-get download -qq "$package"
done
echo "gpu-stage: $(ls *.deb | wc -l) packages in .gpu/"
