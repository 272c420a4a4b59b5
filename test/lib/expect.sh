# Helpers for the end-to-end shell tests (sourced; needs $case_name).
fail() { echo "FAIL ($case_name): $*"; exit 1; }
# expect_error DESCRIPTION PATTERN CMD...: CMD must fail (non-zero) and print PATTERN.
expect_error() {
  local what=$1 pat=$2
  shift 2
  local out
  out=$("$@" 2>&1)
  local rc=$?
  [ $rc -ne 0 ] || fail "$what: expected a failure, got exit 0; output: $out"
  grep -q -E -- "$pat" <<< "$out" || fail "$what: expected /$pat/ in: $out"
  echo "ok: $what: $(echo "$out" | grep -E -- "$pat" | head -1)"
}
