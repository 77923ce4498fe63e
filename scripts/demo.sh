#!/usr/bin/env bash
# The main job on the bundled examples, from a fresh clone: set up, lint every example kernel, simulate the ones
# with a simulate spec, then read a synthetic profile and paint it on an example (scripts/demo-profile.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== nki-studio lint examples/"
nki-studio lint examples/

# Simulate every example kernel that has a '# nki-studio: simulate' spec (each file's spec'd kernels run in a
# sandboxed worker; oracle against the file's reference). There is no Trainium here: the time shown is the
# ESTIMATED timeline, the simulator trace scheduled on the engines (docs/cost-model.md), with the estimated time
# of the lines that issued instructions -- not measured. A failure is reported, the other examples still run,
# and the script exits 1 at the end.
echo "== nki-studio simulate (every example with a spec; times are ESTIMATED, not measured)"
sim_failed=()
for example in $(grep -l "nki-studio: simulate" examples/*.py | sort); do
    echo "-- $example"
    nki-studio simulate "$example" || sim_failed+=("$example")
done

bash scripts/demo-profile.sh examples/rmsnorm_residual.py

if [ ${#sim_failed[@]} -gt 0 ]; then
    echo "simulation failed for: ${sim_failed[*]}" >&2
    exit 1
fi
