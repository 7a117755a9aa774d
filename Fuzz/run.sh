#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ and runs each for FUZZ_SECONDS, one
# after the other in one process each (one core: the machine is shared),
# printing per target its executions and the crashes it wrote.
# Usage: Fuzz/run.sh [TARGET...]   (default: every target)
# FUZZ_RUNS, when set, also stops each target after that many executions.
#
# The build has its own scratch path, so the sanitizer flags never reach the
# normal .build. Both kinds of flags are needed: SwiftPM's --sanitize links
# libFuzzer's main, and -Xswiftc -sanitize=fuzzer,address is what makes a
# release (whole-module) build instrument for coverage.
#
# New inputs go to .build/fuzz/corpus/TARGET (the committed seeds in
# Fuzz/Corpus/TARGET are only read); crashes to Fuzz/artifacts/ (ignored by git),
# where slow-unit-* files are only reports, not counted as crashes.
set -uo pipefail
# libFuzzer reports a trap itself; the Swift runtime's backtracer would get in its way.
export SWIFT_BACKTRACE=enable=no
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
swift=${SWIFT:-swift}
scratch=.build/fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz-http fuzz-websocket fuzz-websocket-deflate fuzz-json fuzz-client-frame fuzz-config)

mkdir -p "$scratch" Fuzz/artifacts
build=("$swift" build --package-path Fuzz --scratch-path "$scratch" -c release
       --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address)
if ! "${build[@]}" > "$scratch/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$scratch/build.log" | tail -40
    echo "fuzz: the build failed (${build[*]})" >&2
    exit 1
fi
bin=$("${build[@]}" --show-bin-path)

status=0
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    log="$scratch/$target.log"
    mkdir -p "$corpus"
    before=$(ls Fuzz/artifacts | grep -cE "^$target-(crash|leak|timeout|oom)-" || true)
    "$bin/$target" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=60 -print_final_stats=1 \
        -artifact_prefix="Fuzz/artifacts/$target-" "$corpus" "Fuzz/Corpus/$target" > "$log" 2>&1
    code=$?
    after=$(ls Fuzz/artifacts | grep -cE "^$target-(crash|leak|timeout|oom)-" || true)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    crashes=$((after - before))
    if [ "$code" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
    echo "$target: ${runs:-0} runs, $crashes crashes${took:+ in $took s}"
    if [ "$crashes" -ne 0 ]; then
        status=1
        grep -E "ERROR|Fatal error|precondition|SUMMARY|Test unit written|artifact" "$log" | head -20 >&2
        echo "$target: full log in $log" >&2
    fi
done
exit $status
