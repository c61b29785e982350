#!/usr/bin/env bash
# Run an irqsim sweep as N shards with GNU parallel, then merge them into exactly the
# files `irqsim run SCENARIO --out OUT` writes on one machine.
#
#   examples/sweep-gnu-parallel.sh SCENARIO OUT [N [IRQSIM-RUN-OPTIONS...]]
#
#   SCENARIO  a scenario file (paths inside it are relative to it)
#   OUT       output directory: the merged results go here, the shards under OUT/shards/K
#   N         number of shards [default: the number of cores]; shard K holds about
#             1/N of the runs (points x variants x replications), see the book,
#             book/src/sweeps.md, "Sweeps on several machines"
#   IRQSIM-RUN-OPTIONS  passed to every `irqsim run`, e.g. --seed 7
#
# Environment:
#   IRQSIM         the irqsim binary [default: irqsim on PATH]
#   THREADS        worker threads per shard [default: 1; parallel runs one shard per core]
#   PARALLEL_ARGS  extra GNU parallel options, split on spaces, e.g. `--jobs 4`, or
#                  `--sshloginfile nodes.txt --workdir .` to spread the shards over
#                  machines that see this directory at the same path (a shared file
#                  system) and run the same irqsim build: `irqsim merge` refuses shards
#                  of another build, scenario or seed
#   MERGE_ARGS     extra `irqsim merge` options, split on spaces, e.g. `--no-plots`
#
# A shard that fails stops the others (--halt now,fail=1) and nothing is merged. Every
# shard runs with --resume, so running the script again after an interruption finishes
# the shards from their checkpoints instead of starting over; a shard already finished
# (its shard.json of the same scenario, seed and build, with all its runs) stops at once
# without simulating and leaves its files as they are.
set -euo pipefail

if [ $# -lt 2 ]; then
  # The usage: the comment block above.
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
scenario=$1
out=$2
n=${3:-$(nproc)}
shift $(($# < 3 ? $# : 3))
irqsim=${IRQSIM:-irqsim}
threads=${THREADS:-1}
# GNU parallel, not moreutils' `parallel` (another program under the same name).
if ! command -v parallel >/dev/null 2>&1; then
  echo "$0: GNU parallel is not installed (no 'parallel' on PATH). Install it:" >&2
  echo "  Debian/Ubuntu: sudo apt-get install parallel; Fedora: sudo dnf install parallel;" >&2
  echo "  macOS: brew install parallel; or https://www.gnu.org/software/parallel/" >&2
  exit 1
fi
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  echo "$0: '$(command -v parallel)' is not GNU parallel (moreutils ships another" >&2
  echo "  program named parallel): install GNU parallel (Debian/Ubuntu: the package parallel)" >&2
  exit 1
fi
if ! command -v "$irqsim" >/dev/null 2>&1; then
  echo "$0: no irqsim binary '$irqsim': set IRQSIM=target/release/irqsim or run" >&2
  echo "  'cargo install --path .' (README.md)" >&2
  exit 1
fi
read -r -a parallel_args <<< "${PARALLEL_ARGS:-}"
read -r -a merge_args <<< "${MERGE_ARGS:-}"

mkdir -p "$out/shards"
# One job per shard, K = 1..N. -q passes each argument as it is (paths with spaces);
# {} is replaced by K.
parallel -q --halt now,fail=1 "${parallel_args[@]}" \
  "$irqsim" run "$scenario" --shard "{}/$n" --out "$out/shards/{}" \
  --threads "$threads" --quiet --resume "$@" \
  ::: $(seq 1 "$n")

# Every shard's directory; merge checks that they are the N shards of one sweep.
shards=()
for k in $(seq 1 "$n"); do
  shards+=("$out/shards/$k")
done
"$irqsim" merge "${shards[@]}" --out "$out" "${merge_args[@]}"
