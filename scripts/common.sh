# Shared set-up for scripts/run and scripts/test: install what is missing, configure, build.
# Idempotent: installed packages are skipped and the build is incremental.
set -euo pipefail

JS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JS_BUILD="${JOINTSCOPE_BUILD_DIR:-$JS_ROOT/build}"

JS_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev qt6-charts-dev libqt6opengl6-dev libgl1-mesa-dev
  libgraphviz-dev graphviz
  libtorch-dev python3-torch python3-networkx
  coinor-libcbc-dev libsqlite3-dev nlohmann-json3-dev libboost-graph-dev
  libgtest-dev libbenchmark-dev
  xvfb xauth
)

js_install_packages() {
  local missing=()
  for p in "${JS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "jointscope: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

js_build() {
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  if [[ ! -f "$JS_BUILD/CMakeCache.txt" ]]; then
    cmake -S "$JS_ROOT" -B "$JS_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  fi
  cmake --build "$JS_BUILD" --parallel "$(nproc)"
}
