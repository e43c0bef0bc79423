# Shared set-up for scripts/run and scripts/test: install what is missing, configure, build.
# Idempotent: installed packages are skipped and the build is incremental.
set -euo pipefail

JS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JS_BUILD="${JOINTSCOPE_BUILD_DIR:-$JS_ROOT/build}"

JS_PACKAGES=(
  build-essential cmake ninja-build pkg-config lld
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev qt6-charts-dev libqt6opengl6-dev libgl1-mesa-dev
  libgraphviz-dev graphviz
  libtorch-dev python3-torch python3-networkx
  coinor-libcbc-dev libsqlite3-dev nlohmann-json3-dev libsimdjson-dev libboost-graph-dev
  libgtest-dev libbenchmark-dev
  xvfb xauth
  ccache
  python3-venv
)

# torch 2.x for the live oracle tests: a virtual environment outside the clone, reused across clones and runs.
JS_TORCH2_VERSION="2.15.0"
JS_TORCH2_ENV="${JOINTSCOPE_TORCH2_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/jointscope/torch-${JS_TORCH2_VERSION%.*}}"
# What the torch 2 tests import beside torch: networkx (the min-cut partitioner), scipy (its ilp knapsack), numpy.
JS_TORCH2_EXTRAS=(networkx scipy numpy)

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

# Creates (once) or completes the torch 2 environment; a registry that cannot be reached is an error, not a skip.
# PyPI's torch wheel names ~4 GB of CUDA wheels; nothing here runs CUDA, but `import torch` loads libtorch_cuda and
# what it links. Where the CUDA toolkit is installed, the environment takes those libraries from it and installs
# only the few wheels the toolkit lacks (cuFile, cuSPARSELt, NVSHMEM, and NCCL, whose torch needs a newer one):
# 2.2 GB instead of 5.5 GB. JOINTSCOPE_TORCH2_FULL=1 installs the wheel's own dependencies instead.
JS_CUDA_LIB="${JOINTSCOPE_CUDA_LIB:-/usr/local/cuda/lib64}"
js_torch2_env() {
  local py="$JS_TORCH2_ENV/bin/python"
  local probe="import sys, torch, networkx, scipy, numpy; sys.exit(torch.__version__.split('+')[0] != '$JS_TORCH2_VERSION')"
  if [[ -x "$py" ]] && "$py" -c "$probe" 2>/dev/null; then
    return 0
  fi
  echo "jointscope: creating the torch $JS_TORCH2_VERSION environment in $JS_TORCH2_ENV (pip install torch==$JS_TORCH2_VERSION)"
  mkdir -p "$(dirname "$JS_TORCH2_ENV")"
  [[ -x "$py" ]] || /usr/bin/python3 -m venv "$JS_TORCH2_ENV"
  local pip=("$py" -m pip install -q --disable-pip-version-check)
  local ok=1
  if [[ "${JOINTSCOPE_TORCH2_FULL:-0}" != 1 && -e "$JS_CUDA_LIB/libcudart.so.13" ]]; then
    "${pip[@]}" --no-deps --no-warn-conflicts "torch==$JS_TORCH2_VERSION" &&
      mapfile -t reqs < <("$py" "$JS_ROOT/scripts/torch2-requirements" --toolkit "$JS_CUDA_LIB") &&
      "${pip[@]}" --no-warn-conflicts "${reqs[@]}" "${JS_TORCH2_EXTRAS[@]}" &&
      "$py" "$JS_ROOT/scripts/torch2-requirements" --link-toolkit "$JS_CUDA_LIB" || ok=0
  else
    "${pip[@]}" "torch==$JS_TORCH2_VERSION" "${JS_TORCH2_EXTRAS[@]}" || ok=0
  fi
  if ((!ok)); then
    echo "jointscope: ERROR: pip could not install torch==$JS_TORCH2_VERSION into $JS_TORCH2_ENV." >&2
    echo "jointscope: the torch 2 oracle tests need the Python package registry (PyPI); check the network or" >&2
    echo "jointscope: point JOINTSCOPE_TORCH2_ENV at an environment that has torch $JS_TORCH2_VERSION." >&2
    return 1
  fi
  "$py" -c "$probe" || { echo "jointscope: ERROR: $py does not import torch $JS_TORCH2_VERSION" >&2; return 1; }
}

# ccache keeps compiled objects across clones (CI builds a fresh clone on a machine that built before). The
# base directory and no hashed working directory make its keys independent of where the clone lies (the suites
# take Qt6::Test without the clone's path it defines for QFINDTESTDATA: tests/CMakeLists.txt,
# jointscope_qttest). The test suites' precompiled header needs the sloppiness ccache's
# manual names for one; GCC's .gch (not the same bytes twice) is cached too, so a suite's key, which hashes the
# .gch, is the same in every clone.
js_launcher_args() {
  command -v ccache >/dev/null || return 0
  local sloppiness="pch_defines,time_macros,include_file_mtime,include_file_ctime"
  local launcher="/usr/bin/env;CCACHE_BASEDIR=$(dirname "$JS_ROOT");CCACHE_NOHASHDIR=1;CCACHE_SLOPPINESS=$sloppiness"
  launcher+=";ccache"
  printf '%s\n' "-DCMAKE_C_COMPILER_LAUNCHER=$launcher" "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher"
}

# RelWithDebInfo with line tables only (-g1): backtraces and profiles still name file:line, and the build takes
# 40% less time than with full -g (tst_graph.cpp: 16.1 s -> 9.8 s); a debugger session wants its own -g build.
JS_CXX_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")

# Runs a step and says how long it took (what set-up costs, read from any log of scripts/test).
js_timed() {
  local step="$1" start=$SECONDS
  shift
  "$@"
  local took=$((SECONDS - start))
  echo "jointscope: $step took $((took / 60)) min $((took % 60)) s"
}

js_build() {
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  if [[ ! -f "$JS_BUILD/CMakeCache.txt" ]]; then
    local launcher
    mapfile -t launcher < <(js_launcher_args)
    cmake -S "$JS_ROOT" -B "$JS_BUILD" "${gen[@]}" "${launcher[@]}" "${JS_CXX_FLAGS[@]}" \
      -DJOINTSCOPE_TORCH2_PYTHON="$JS_TORCH2_ENV/bin/python" "$@"
  fi
  cmake --build "$JS_BUILD" --parallel "$(nproc)"
}

# core/runtime against torch 2.x's LibTorch as well (the pip wheel of the torch 2 environment, CUDA compiled in
# where the wheel has it): a second build directory with the runtime programs and their tests only.
JS_BUILD_TORCH2="${JOINTSCOPE_BUILD_TORCH2_DIR:-$JS_ROOT/build-torch2}"
JS_TORCH2_TARGETS=(jointscope-cli jointscope-cli-runtime tst_runtime tst_runtime_sharding tst_runtime_guard)
js_build_torch2() {
  local prefix
  prefix="$("$JS_TORCH2_ENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  if [[ ! -f "$JS_BUILD_TORCH2/CMakeCache.txt" ]]; then
    local args=("${JS_CXX_FLAGS[@]}" -DJOINTSCOPE_WITH_TORCH=ON -DJOINTSCOPE_WITH_GRAPHVIZ=OFF
                -DJOINTSCOPE_BENCH=OFF "-DCMAKE_PREFIX_PATH=$prefix"
                # TorchConfig finds c10 with default paths first: Debian's 1.13 libc10 must not win.
                "-Dc10_LIBRARY=$prefix/../../lib/libc10.so")
    command -v ninja >/dev/null && args+=(-G Ninja)
    local launcher
    mapfile -t launcher < <(js_launcher_args)
    args+=("${launcher[@]}")
    if [[ -x /usr/local/cuda/bin/nvcc ]]; then
      args+=(-DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
    fi
    # No GPU here to detect an architecture from: name Hopper, the machines we profile on.
    TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" cmake -S "$JS_ROOT" -B "$JS_BUILD_TORCH2" "${args[@]}"
  fi
  TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" \
    cmake --build "$JS_BUILD_TORCH2" --parallel "$(nproc)" --target "${JS_TORCH2_TARGETS[@]}"
}
