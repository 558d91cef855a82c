#!/usr/bin/env bash
# The Ray versions tuner is tested on, side by side: for each, the unit tier and a conformance smoke (a sweep
# per scheduler and searcher, a kill -9 resume, damaged checkpoints, a class trainable, a cluster of another
# Ray refused). .venv's own Ray is the newest (2.60.0); each other version is installed beside it, without
# dependencies, into .ray-matrix/VERSION and put first on PYTHONPATH, so the environments share everything
# but Ray. Ray's workers inherit PYTHONPATH, so every process of a sweep runs that Ray.
#   RAY_MATRIX="2.50.0 2.55.1 2.60.0" bash tests/ray_matrix.sh      (the default; CI leaves out 2.60.0,
#                                                                     which make test has just run)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
VERSIONS="${RAY_MATRIX:-2.50.0 2.55.1 2.60.0}"
# the unit tier shared as make test shares it (114 s against 142 s for Ray 2.55.1 on 2 cores); the smoke is not:
# a module or two of long sweeps sets its time, and two processes made it slower (202 s against 183 s)
SHARE=(-n "${TEST_WORKERS:-2}" --dist loadscope)
OWN=$($PY -c 'import ray; print(ray.__version__)')
# The fast tier's cover of every scheduler and searcher (instant trials), then named slow tests: a kill -9 resume,
# damaged checkpoints, every trainable and space form under ASHA (a class, the searcher-native spaces), a cluster
# of another Ray refused, the canaries of the quarantine's parts that need a running Ray, and Ray's BayesOptSearch
# pickled, saved and restored mid-replay (its one short contract case, 2 s, run despite its slow mark). The unit tier leaves out its slow-marked
# tests (the Gaussian-process searchers' other contract cases, about 10 s each, a browser layout, a storage
# bound): they read no more of Ray than the smoke's real sweeps of every searcher, and make test runs them.
SMOKE_COVER=(tests/integration/test_matrix.py)
SMOKE_NAMED=(
    tests/integration/test_resume.py::test_checkpoints_damaged_or_deleted_after_a_kill_9_cost_no_trial_its_epochs
    tests/conformance/test_forms.py::test_each_form_is_searched_as_its_plan_says_and_runs_under_asha
    tests/integration/test_cluster_versions.py
    tests/integration/test_ray_compat_live.py
    "tests/unit/test_scheduler_contract.py::test_a_scheduler_keeps_the_contract[hyperband-bayesopt-1]"
)
mkdir -p .ray-matrix
declare -A RESULT
declare -A FAILED
declare -A FAILURES
for version in $VERSIONS; do
    path=""
    if [ "$version" != "$OWN" ]; then
        path="$PWD/.ray-matrix/$version"  # absolute: tests start processes in other folders
        if [ ! -f "$path/.installed" ]; then
            echo "ray-matrix: installing ray==$version into $path"
            rm -rf "$path"
            $PY -m pip install --quiet --no-deps --target "$path" "ray==$version" || { RESULT[$version]="install failed"; FAILED[$version]=1; continue; }
            touch "$path/.installed"
        fi
    fi
    got=$(PYTHONPATH="$path" $PY -c 'import ray; print(ray.__version__)')
    if [ "$got" != "$version" ]; then RESULT[$version]="imports Ray $got"; FAILED[$version]=1; continue; fi
    started=$SECONDS
    echo "ray-matrix: Ray $version: unit tier"
    PYTHONPATH="$path" $PY -m pytest tests/unit "${SHARE[@]}" -q -p no:cacheprovider -m "not gpu and not slow" > ".ray-matrix/unit-$version.log" 2>&1 || FAILED[$version]=1
    unit=$(tail -1 ".ray-matrix/unit-$version.log" | sed 's/=//g; s/^ *//; s/ in [0-9.]*s.*//')
    echo "ray-matrix: Ray $version: conformance smoke"
    log=".ray-matrix/smoke-$version.log"
    PYTHONPATH="$path" $PY -m pytest "${SMOKE_COVER[@]}" -q -p no:cacheprovider -m "not slow" > "$log" 2>&1 || FAILED[$version]=1
    cover=$(tail -1 "$log" | sed 's/=//g; s/^ *//; s/ in [0-9.]*s.*//')
    PYTHONPATH="$path" $PY -m pytest "${SMOKE_NAMED[@]}" -q -p no:cacheprovider -m "" >> "$log" 2>&1 || FAILED[$version]=1
    named=$(tail -1 "$log" | sed 's/=//g; s/^ *//; s/ in [0-9.]*s.*//')
    RESULT[$version]="unit: $unit; smoke: $cover (every scheduler and searcher), $named (resume, forms, versions); $((SECONDS - started)) s"
    # CI keeps only the tail of what this prints: name what failed here, with its one-line reason
    FAILURES[$version]=$(grep -h -E "^(FAILED|ERROR)[: ]" ".ray-matrix/unit-$version.log" "$log" | cut -c1-300)
done
echo
echo "Ray version matrix (logs in .ray-matrix/):"
status=0
for version in $VERSIONS; do
    verdict="passed"
    if [ -n "${FAILED[$version]:-}" ]; then verdict="FAILED"; status=1; fi
    printf '  Ray %-8s %-7s %s\n' "$version" "$verdict" "${RESULT[$version]}"
    if [ -n "${FAILURES[$version]:-}" ]; then sed 's/^/      /' <<< "${FAILURES[$version]}"; fi
done
exit $status
