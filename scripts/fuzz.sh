#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 60s) each; a crash fails the run and
# leaves its input under the package's testdata/fuzz folder, to be kept as a test case.
#
# Each input that widens coverage is minimized for at most FUZZMINIMIZETIME (default 5s), not
# Go's 60 s: minimizing the large inputs of the session targets (an RTMP session, an SRT
# listener's datagram sequence) took most of each run. Measured over 45 s on one worker:
# FuzzServerSession ran 140 inputs and kept no new one with 60 s, 3 170 inputs and 17 new ones
# with 2 s; FuzzListener kept 2 new inputs with 60 s, 13 with 3 s.
#
# Go's fuzzing coordinator (before Go 1.27, golang/go#75804) can fail a target at the end of its
# -fuzztime with a bare "context deadline exceeded" and no failing input: a race between the
# deadline and its workers, not a finding. Such a run is run once more; a second one fails.
set -euo pipefail
fuzztime=${FUZZTIME:-60s}
minimizetime=${FUZZMINIMIZETIME:-5s}
# inputs counts the failing inputs kept for a target (its folder may not exist).
inputs() { (find "$1" -type f 2>/dev/null || true) | wc -l; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    for try in 1 2; do
      echo "== $pkg $target ($fuzztime)"
      before=$(inputs "$dir/testdata/fuzz/$target")
      if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimizetime" "$pkg" 2>&1 | tee "$out"; then
        break
      fi
      after=$(inputs "$dir/testdata/fuzz/$target")
      # The race's signature: the deadline is the only error and no input was written.
      if [ "$try" = 1 ] && [ "$after" = "$before" ] && grep -qx '    context deadline exceeded' "$out" &&
        ! grep -q -e 'Failing input written' -e 'panic:' -e '_test.go:[0-9]*:' "$out"; then
        echo "== $target: the fuzzing coordinator's deadline race, no failing input; running it again"
        continue
      fi
      exit 1
    done
  done
done
