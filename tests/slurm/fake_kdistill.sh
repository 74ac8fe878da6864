#!/bin/bash
# fake_kdistill.sh - stands in for kdistill in the signal-forwarding test of the job scripts.
#   fake_kdistill.sh run CONFIG --output OUT [...]: every rank writes OUT.started.<rank>,
#     then waits up to FAKE_WAIT seconds (default 170) for SIGUSR1/SIGTERM; on a signal it writes
#     the signal name to OUT.signal.<rank> and exits 3 (kdistill's "interrupted, checkpoint
#     written"); on timeout it exits 4.
#   fake_kdistill.sh info FILE: prints one line, exits 0.
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}
case "${1:-}" in
  info) echo "fake info $2"; exit 0 ;;
  run) ;;
  *) echo "fake_kdistill: usage: run CONFIG --output OUT | info FILE" >&2; exit 1 ;;
esac
out=""
prev=""
for a in "$@"; do
  if [ "$prev" = --output ]; then out=$a; fi
  prev=$a
done
[ -n "$out" ] || { echo "fake_kdistill: no --output OUT" >&2; exit 1; }
got=""
trap '[ -n "$got" ] || got=USR1' USR1
trap '[ -n "$got" ] || got=TERM' TERM
echo "$$" > "$out.started.$rank"
end=$((SECONDS + ${FAKE_WAIT:-170}))
while [ -z "$got" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
if [ -n "$got" ]; then
  echo "$got" > "$out.signal.$rank"
  exit 3
fi
exit 4
