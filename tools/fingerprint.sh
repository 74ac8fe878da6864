#!/bin/bash
# fingerprint.sh - run every shipped config under configs/ at 1, 2 and 4 ranks and print one line
# per output file: config, rank count, a SHA-256 over every dataset and every deterministic /metrics
# attribute (timings left out), and the reported MMD. Two builds are bitwise equivalent on the
# shipped configs when their outputs are identical:
#   tools/fingerprint.sh build-old/kdistill > before.txt
#   tools/fingerprint.sh build-new/kdistill > after.txt && diff before.txt after.txt
# Configs whose input files are not in the repository (validate fails) are listed as skipped.
# KD_FP_RANKS overrides the rank counts (default "1 2 4"); KD_FP_CONFIGS the config list.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build-test/kdistill}")
root=$(pwd)
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hash_h5() {
  /usr/bin/python3 - "$@" <<'PY'
import hashlib, sys
import h5py, numpy as np
SKIP = ("seconds", "created_utc", "time", "comm_")
for path in sys.argv[1:]:
    h = hashlib.sha256()
    mmd = "-"
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if any(s in name for s in SKIP):
                return
            if isinstance(obj, h5py.Dataset):
                v = np.asarray(obj[()])
                h.update(name.encode())
                # variable-length strings are objects: hash their text, not their addresses
                h.update(repr(v.tolist()).encode() if v.dtype.kind == "O" else v.tobytes())
        f.visititems(visit)
        if "metrics" in f:
            for k in sorted(f["metrics"].attrs):
                if any(s in k for s in SKIP):
                    continue
                h.update(k.encode()); h.update(np.asarray(f["metrics"].attrs[k]).tobytes())
            if "mmd" in f["metrics"].attrs:
                mmd = repr(float(f["metrics"].attrs["mmd"]))
    print(h.hexdigest()[:16], mmd)
PY
}
for cfg in ${KD_FP_CONFIGS:-configs/*.yaml}; do
  name=$(basename "$cfg" .yaml)
  if ! "$bin" validate "$cfg" >/dev/null 2>&1; then
    echo "$name skipped (does not validate here)"
    continue
  fi
  for np in ${KD_FP_RANKS:-1 2 4}; do
    dir="$work/$name.$np"
    mkdir -p "$dir/out"  # configs write side files (CSV tables) under out/
    (cd "$dir" && ln -s "$root/configs" configs &&
      mpirun -np "$np" --oversubscribe "$bin" run "configs/$name.yaml" --quiet \
        --output "$dir/out.h5" >"$dir/log" 2>&1)
    rc=$?
    files=$(cd "$dir" && find . -name '*.h5' | sort)
    if [ -z "$files" ]; then
      echo "$name np$np rc=$rc no-output"
      continue
    fi
    for f in $files; do
      echo "$name np$np rc=$rc $f $(cd "$dir" && hash_h5 "$f")"
    done
  done
done
