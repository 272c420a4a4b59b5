#!/bin/sh
# Fails if any of the given binaries links libLLVM or libMLIR (directly or
# through its dependencies, as ldd resolves them).
status=0
for f in "$@"; do
  if ! out=$(ldd "$f" 2>&1); then
    echo "check_no_llvm: ldd failed on $f: $out"
    exit 1
  fi
  bad=$(printf '%s\n' "$out" | grep -i -E 'libLLVM|libMLIR' || true)
  if [ -n "$bad" ]; then
    echo "check_no_llvm: $f links LLVM/MLIR:"
    printf '%s\n' "$bad"
    status=1
  else
    echo "check_no_llvm: $f: no LLVM/MLIR among $(printf '%s\n' "$out" | wc -l) libraries"
  fi
done
exit $status
