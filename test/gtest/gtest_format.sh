#
# Shell tests report in GoogleTest's format, so contrib/test-summary.sh counts
# them like the C++ suites. Source this, set `suite`, call `check NAME CMD...`
# for each test and `finish` at the end (exits 1 if any test failed).
#
passed=0 failed=0

check() {   # name, command...
    local name=$1; shift
    echo "[ RUN      ] $suite.$name"
    if "$@"; then
        echo "[       OK ] $suite.$name"; passed=$((passed + 1))
    else
        echo "[  FAILED  ] $suite.$name"; failed=$((failed + 1))
    fi
}

finish() {
    echo "[==========] $((passed + failed)) tests ran."
    echo "[  PASSED  ] $passed tests."
    [ $failed -eq 0 ] || { echo "[  FAILED  ] $failed tests."; exit 1; }
}
