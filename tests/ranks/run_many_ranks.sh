#!/bin/bash
# run_many_ranks.sh - rank invariance past the 1-4 ranks of the other tests (issue "large scale"):
# thin (kt_compress), herd (bpcg), quad (nystrom_recombination + opt) and ctt on small inputs at
# 1, 8 and 16 ranks (oversubscribed), and at 8 ranks over TCP without shared memory, give bitwise
# the same output datasets (coreset points, weights, indices; the test's statistic and p-value)
# and MMD; with --verbose every run records
# its communication volume (/metrics comm_bytes_max, comm_ops_max): 0 at one rank, > 0 above; thin
# at 8 ranks gives the same output with KH-Refine's candidates shared by all ranks or not, and with
# its leaf bins split over the ranks (algorithm.leaf_split), stored or generated, and with its
# shared halvings in groups (algorithm.halve_group).
KD_E2E_NAME=ranks
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
PY=/usr/bin/python3
# shellcheck source=../lib/rank_configs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/rank_configs.sh"
key() { # FILE: a hash of the result datasets and the MMD / test metrics (timings, comm left out)
  $PY - "$1" <<'P'
import hashlib, sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
h = hashlib.sha256()
for d in ("coreset/points", "coreset/weights", "coreset/indices"):
    h.update(np.ascontiguousarray(f[d][...]).tobytes())
for a in ("mmd", "statistic", "p_value", "reject"):
    if a in f["metrics"].attrs:
        h.update(np.float64(f["metrics"].attrs[a]).tobytes())
print(h.hexdigest()[:16])
P
}
comm() { $PY -c 'import sys, h5py; m = h5py.File(sys.argv[1], "r")["metrics"].attrs; print(int(m["comm_bytes_max"]), int(m["comm_ops_max"]))' "$1"; }
# tcp8: 8 ranks with shared memory left out (ob1 over the TCP byte-transfer layer on the loopback
# interface): the path messages take between nodes
tcp="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"
for t in thin herd quad ctt; do
  ref=""
  for n in 1 8 16 tcp8; do
    np=${n#tcp} flags=$KD_MPIEXEC_FLAGS
    [ "$n" = "$np" ] || flags="$KD_MPIEXEC_FLAGS $tcp"
    if ! KD_MPIEXEC_FLAGS=$flags mpi "$np" run "$t.yaml" -v --output "$t.$n.h5" >"$t.$n.txt" 2>&1; then
      bad "$t at $n ranks: $(tail -3 "$t.$n.txt")"
      continue
    fi
    k=$(key "$t.$n.h5")
    read -r bytes ops <<<"$(comm "$t.$n.h5")"
    [ -z "$ref" ] && ref=$k
    [ "$k" = "$ref" ] && ok "$t at $n ranks: the 1-rank result bitwise ($k)" ||
      bad "$t at $n ranks: result $k, 1 rank gives $ref"
    if [ "$n" = 1 ]; then
      [ "$bytes" = 0 ] && ok "$t at 1 rank: no communication recorded" || bad "$t at 1 rank: $bytes bytes"
    else
      [ "$bytes" -gt 0 ] && [ "$ops" -gt 0 ] &&
        ok "$t at $n ranks: $bytes bytes in $ops operations on the busiest rank" ||
        bad "$t at $n ranks: communication $bytes bytes / $ops operations"
    fi
  done
done
# KH-Refine's groups (algorithm.refine_group_rows): thin's 512 candidates shared by all 8 ranks
# (1) or run by every rank alone (the default 2048): the same output, and the evaluations of all
# ranks added up are fewer when the ranks share the candidates
evals() { $PY -c 'import sys, h5py; print(int(h5py.File(sys.argv[1], "r")["metrics"].attrs["kernel_evals"]))' "$1"; }
thin_ref=$(key thin.1.h5)
# same8 CONFIG REF OUT KEY=VALUE: CONFIG at 8 ranks with the setting gives the result REF
same8() {
  local cfg=$1 want=$2 out=$3 set=$4 k
  if mpi 8 run "$cfg" --set "algorithm.$set" --output "$out.h5" >"$out.txt" 2>&1; then
    k=$(key "$out.h5")
    [ "$k" = "$want" ] && ok "$cfg at 8 ranks, $set: the 1-rank result ($k)" ||
      bad "$cfg at 8 ranks, $set: result $k, 1 rank gives $want"
  else
    bad "$cfg at 8 ranks, $set: $(tail -3 "$out.txt")"
  fi
}
for rows in 1 2048; do same8 thin.yaml "$thin_ref" "thin.g$rows" "refine_group_rows=$rows"; done
# the shared halvings in groups of 2 or 3 ranks (algorithm.halve_group; 32 by default, the most
# a chunk splits over): every group makes the same halving, the output is the 1-rank one
for hg in 2 3; do same8 thin.yaml "$thin_ref" "thin.h$hg" "halve_group=$hg"; done
e1=$(evals thin.g1.h5) e2=$(evals thin.g2048.h5)
[ -n "$e1" ] && [ -n "$e2" ] && [ "$e1" -lt "$e2" ] &&
  ok "thin at 8 ranks: $e1 evaluations with the candidates shared, $e2 with every rank alone" ||
  bad "thin at 8 ranks: evaluations shared '$e1' not below alone '$e2'"
# Compress's leaf bins split over the ranks (algorithm.leaf_split): 20000 rows (64 bins of 256
# slots, each with a remainder to absorb), stored and generated, at 8 ranks with every bin
# compressed from its 4 or 16 descendants on other ranks: the 1-rank output, and the same kernel
# evaluations as at 8 ranks without the split (none counted twice)
for lazy in false true; do
  cfg=split_lazy_$lazy.yaml
  sed -e 's/n: 4096,/n: 20000,/' -e "s/weights: \[0.5, 0.5\]}/weights: [0.5, 0.5], lazy: $lazy}/" thin.yaml >$cfg
  grep -q "n: 20000,.*lazy: $lazy" $cfg || bad "$cfg not written: $(cat $cfg)"
  mpi 1 run $cfg --output "split.$lazy.ref.h5" >"split.$lazy.ref.txt" 2>&1 ||
    bad "$cfg, 1 rank: $(tail -3 "split.$lazy.ref.txt")"
  sref=$(key "split.$lazy.ref.h5")
  for j in 0 1 2; do same8 $cfg "$sref" "split.$lazy.$j" "leaf_split=$j"; done
  e0=$(evals "split.$lazy.0.h5") e1=$(evals "split.$lazy.1.h5") e2=$(evals "split.$lazy.2.h5")
  [ -n "$e0" ] && [ "$e0" = "$e1" ] && [ "$e0" = "$e2" ] &&
    ok "thin at 8 ranks, lazy $lazy: $e0 kernel evaluations with and without the split" ||
    bad "thin at 8 ranks, lazy $lazy: evaluations '$e0' (no split), '$e1', '$e2' (split)"
done
[ $fails = 0 ] && echo "all many-rank checks passed" || { echo "$fails many-rank checks failed"; exit 1; }
