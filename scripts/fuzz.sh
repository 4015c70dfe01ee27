#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 60s) each; a crash fails the run and
# leaves its input under the package's testdata/fuzz folder, to be kept as a test case.
set -euo pipefail
fuzztime=${FUZZTIME:-60s}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
