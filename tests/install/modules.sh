#!/bin/bash
# modules.sh BUILD PYTHON - `cmake --install` into two prefixes (the version of this build and a
# fake other version beside it, as a site installs them), then with Lmod (Debian's lmod, installed
# by tools/test.sh) load the Lua modulefile and the Tcl one, and with Environment Modules
# (modulecmd, if that is the module system present instead) the Tcl one: PATH, LD_LIBRARY_PATH,
# MANPATH, PKG_CONFIG_PATH, CMAKE_PREFIX_PATH and PYTHONPATH reach the prefix, `kdistill --version`
# and `import kdistill` work, `module unload` restores the environment, and loading the other
# version swaps the first out.
set -uo pipefail
build=$1
py=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
lmod_init=$(ls /usr/share/lmod/lmod/init/bash /usr/share/lmod/*/init/bash 2>/dev/null | head -n1)
modcmd=$(command -v modulecmd || ls /usr/lib/x86_64-linux-gnu/modulecmd.tcl 2>/dev/null | head -n1)
if [ -z "$lmod_init" ] && [ -z "$modcmd" ]; then
  echo "SKIP: no module system (Debian 12: apt-get install lmod; tools/test.sh installs it)"
  exit 77
fi
version=$("$build/kdistill" --version | head -n1 | awk '{print $2}')
[ -n "$version" ] || bad "kdistill --version printed no version"
cmake --install "$build" --prefix "$work/apps/kdistill/$version" >/dev/null || bad "install"
mf="$work/apps/kdistill/$version/share/kdistill/modulefiles/kdistill"
[ -f "$mf/$version.lua" ] || bad "no Lua modulefile $mf/$version.lua"
[ -f "$mf/$version" ] || bad "no Tcl modulefile $mf/$version"
head -n1 "$mf/$version" | grep -q '^#%Module' || bad "the Tcl modulefile lacks its #%Module line"
# the site's module tree: one directory that every installed version links into (docs/hpc.md)
mkdir -p "$work/lua/kdistill" "$work/tcl/kdistill"
ln -s "$mf/$version.lua" "$work/lua/kdistill/$version.lua"
ln -s "$mf/$version" "$work/tcl/kdistill/$version"
# a second version beside it: the same files with the version and prefix changed
other=9.9.9
sed "s|$version|$other|g" "$mf/$version.lua" >"$work/lua/kdistill/$other.lua"
sed "s|$version|$other|g" "$mf/$version" >"$work/tcl/kdistill/$other"

# check KIND DIR: run in a clean bash that initialises the module system and loads kdistill
check() {
  local kind=$1 dir=$2 init=$3 out
  out=$(env -i HOME="$work" PATH=/usr/bin:/bin TERM=dumb MANPATH=/usr/share/man bash --norc --noprofile -c "
    $init
    module use '$dir' || exit 11
    before=\$(env | grep -E '^(PATH|LD_LIBRARY_PATH|MANPATH|PKG_CONFIG_PATH|CMAKE_PREFIX_PATH|PYTHONPATH)=' | sort)
    module load kdistill/$version || exit 12
    for v in PATH LD_LIBRARY_PATH MANPATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH PYTHONPATH; do
      echo \"\$v=\${!v}\"
    done
    echo \"ROOT=\$KDISTILL_ROOT\"
    echo \"WHICH=\$(command -v kdistill)\"
    echo \"VERSION=\$(kdistill --version | head -n1)\"
    echo \"IMPORT=\$(cd / && '$py' -c 'import kdistill, os; print(os.path.dirname(kdistill.__file__))' 2>&1)\"
    echo \"PC=\$(pkg-config --modversion kdistill 2>&1)\"
    module load kdistill/$other >/dev/null 2>&1 || module swap kdistill kdistill/$other >/dev/null 2>&1
    echo \"SWAPPED=\$KDISTILL_VERSION\"
    module unload kdistill
    # without a MANPATH the module leaves it unset (man-db maps PATH's <prefix>/bin to share/man)
    unset MANPATH
    module load kdistill/$version
    echo \"NOMANPATH=\${MANPATH-unset}\"
    command -v manpath >/dev/null && echo \"MANMAP=\$(manpath 2>/dev/null)\"
    module unload kdistill
    export MANPATH=/usr/share/man
    after=\$(env | grep -E '^(PATH|LD_LIBRARY_PATH|MANPATH|PKG_CONFIG_PATH|CMAKE_PREFIX_PATH|PYTHONPATH)=' | sort)
    [ \"\$before\" = \"\$after\" ] && echo RESTORED=yes || echo \"RESTORED=no: \$after\"
  " 2>&1)
  local rc=$?
  echo "--- $kind"
  echo "$out"
  [ $rc -eq 0 ] || bad "$kind: the shell exited with $rc"
  local p="$work/apps/kdistill/$version"
  for want in "PATH=$p/bin:" "LD_LIBRARY_PATH=$p/lib" "MANPATH=$p/share/man:/usr/share/man" "NOMANPATH=unset" \
    "PKG_CONFIG_PATH=$p/lib/pkgconfig" "CMAKE_PREFIX_PATH=$p" "PYTHONPATH=$p/lib/python3" \
    "ROOT=$p" "WHICH=$p/bin/kdistill" "VERSION=kdistill $version" "IMPORT=$p/lib/python3" \
    "PC=$version" "SWAPPED=$other" "RESTORED=yes"; do
    grep -q "^$want" <<<"$out" || bad "$kind: no line starting '$want'"
  done
  if grep -q '^MANMAP=' <<<"$out"; then
    grep -q "^MANMAP=.*$p/share/man" <<<"$out" || bad "$kind: manpath does not reach $p/share/man"
  fi
}
if [ -n "$lmod_init" ]; then
  check "Lmod, Lua modulefile" "$work/lua" "source '$lmod_init'"
  check "Lmod, Tcl modulefile" "$work/tcl" "source '$lmod_init'"
fi
if [ -n "$modcmd" ] && [ -z "$lmod_init" ]; then
  check "Environment Modules, Tcl modulefile" "$work/tcl" \
    "source /usr/share/modules/init/bash 2>/dev/null || eval \"\$('$modcmd' bash autoinit)\""
fi
# the job scripts load it by name (KD_MODULES), from a batch shell without `module`, and run the
# kdistill the module puts on PATH
src=$(cd "$(dirname "$0")/../.." && pwd)
printf 'task: thin\ndata: {type: gaussian, n: 512, d: 2}\nalgorithm: {name: uniform, n_out: 8}\n' >"$work/t.yaml"
init=$lmod_init
[ -n "$init" ] || init=/usr/share/modules/init/bash
env -i HOME="$work" PATH=/usr/bin:/bin MODULEPATH="$work/lua:$work/tcl" KD_MODULE_INIT="$init" \
  KD_MODULES="kdistill/$version" KD_LAUNCHER=none KD_CONFIG="$work/t.yaml" KD_OUTPUT="$work/job.h5" \
  KD_INFO=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  bash "$src/jobs/thinning.sbatch" >"$work/job.out" 2>"$work/job.err" || bad "job script: $(tail -n 3 "$work/job.err")"
grep -q "module load kdistill/$version" "$work/job.err" || bad "job script: no 'module load' line"
grep -q "$work/apps/kdistill/$version/bin/kdistill" "$work/job.err" ||
  bad "job script: did not run the module's kdistill: $(grep -i kdistill "$work/job.err" | head -n 3)"
[ -f "$work/job.h5" ] || bad "job script: no output"
[ "$fails" -eq 0 ] || exit 1
echo "modules OK"
