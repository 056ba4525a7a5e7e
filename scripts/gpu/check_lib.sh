# Shared by the GPU check scripts (sourced, not run): the bundle's runner
# and libraries, and the helpers that append one check or one benchmark to
# $report (logs to $log) and count failures. The sourcing script sets
# `report` and `log` after sourcing and may read `root`, `bundle`, `arch`,
# `out`, `runner` and `san`.
#   source "$(dirname "$0")/check_lib.sh" "$@"     # [BUNDLE_DIR] [ARCH]
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bundle=${1:-$root/build-gpu}
arch=${2:-sm_90a}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
runner="$bundle/tlc_cuda_runner"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
failures=0

# start TITLE: a new $report headed "TITLE on GPU, date" with an empty
# table of checks, and an empty $log.
start() {
  {
    echo "# $1 on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "| check | result |"
    echo "|---|---|"
  } >"$report"
  : >"$log"
}

# run NAME COMMAND...: a table row PASS or FAIL; the command's output goes to $log.
run() {
  local name=$1
  shift
  echo "=== $name" >>"$log"
  if "$@" >>"$log" 2>&1; then
    echo "| $name | PASS |" >>"$report"
  else
    echo "| $name | **FAIL** |" >>"$report"
    failures=$((failures + 1))
  fi
}

# bench LABEL RUNNER-ARGS...: the runner's bench and cublas lines for a
# kernel timed on $arch against cuBLAS in the same process.
bench() {
  local label=$1
  shift
  echo "=== $label" >>"$report"
  "$runner" "$@" --arch "$arch" --bench --cublas 2>>"$log" | grep -E '^(bench|cublas)' >>"$report" ||
    failures=$((failures + 1))
}
