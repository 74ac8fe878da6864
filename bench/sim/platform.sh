#!/bin/bash
# platform.sh - a SimGrid platform for the simulated runs (bench/sim/README.md):
#   platform.sh crossbar|fattree HOSTS SPEED OUT.xml OUT.hosts [LATENCY]
# HOSTS nodes named node-0 .. node-(HOSTS-1), each of speed SPEED (SimGrid units: "1Gf"), joined by
# 100 Gb/s links of latency LATENCY (SimGrid units, default 1us): `crossbar` (every pair of
# nodes through its own two links, no shared backbone) or `fattree` (a two-level fat tree of
# 16-port switches: HOSTS/16 leaf switches, 16 spine switches, one link per switch pair; HOSTS a
# multiple of 16, at most 256).
# OUT.hosts lists the nodes, one per line (smpirun -hostfile: rank r on node r).
set -euo pipefail
[ $# = 5 ] || [ $# = 6 ] ||
  { echo "usage: platform.sh crossbar|fattree HOSTS SPEED OUT.xml OUT.hosts [LATENCY]" >&2; exit 2; }
kind=$1 n=$2 speed=$3 xml=$4 hosts=$5 lat=${6:-1us}
[[ $lat =~ ^[0-9.]+(ns|us|ms|s)$ ]] ||
  { echo "platform.sh: LATENCY must be a time such as 1us (got '$lat')" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "platform.sh: HOSTS must be a positive integer" >&2; exit 2; }
case $kind in
  crossbar) topo="" ;;
  fattree)
    { [ $((n % 16)) = 0 ] && [ "$n" -le 256 ]; } ||
      { echo "platform.sh: fattree needs HOSTS a multiple of 16, at most 256 (got $n)" >&2; exit 2; }
    topo=" topology=\"FAT_TREE\" topo_parameters=\"2;16,$((n / 16));1,16;1,1\"" ;;
  *) echo "platform.sh: unknown platform '$kind' (crossbar or fattree)" >&2; exit 2 ;;
esac
cat >"$xml" <<X
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="kd" prefix="node-" suffix="" radical="0-$((n - 1))" speed="$speed" bw="100Gbps" lat="$lat"$topo/>
</platform>
X
seq 0 $((n - 1)) | sed 's/^/node-/' >"$hosts"
