#!/bin/sh
# gather-host.sh: collect the dumps `irqsim import-host` reads, and two counter
# snapshots a few seconds apart, from the Linux host it runs on.
#
#   sh examples/gather-host.sh OUT [IFACE...]
#
# OUT/host/      the dump directory: `irqsim import-host OUT/host` reads it (the file
#                names are those of src/config/import/mod.rs; each file is the output of
#                the command written beside it below, nothing else).
# OUT/counters/0/, OUT/counters/1/
#                two snapshots, GATHER_INTERVAL seconds apart (default 5), of
#                /proc/net/softnet_stat, /proc/interrupts, /proc/net/dev,
#                `ethtool -S IFACE` and /proc/stat, each with the time it was taken
#                (`time`, seconds since the epoch), named as `irqsim run
#                --linux-counters` names its files (softnet_stat, interrupts, net-dev,
#                ethtool-S-IFACE; and stat): `irqsim advise OUT` reads them with
#                OUT/host/; import-host does not read them.
#
# IFACE: the interfaces to dump [default: every interface with a device behind it,
# /sys/class/net/*/device, which leaves out lo, bridges, veth, ifb and tunnels].
# Needs util-linux (lscpu), procps (sysctl), iproute2 (ip) and ethtool; a tool that is
# missing is said on stderr and its files are not written (import-host then names the
# file it misses and the command that writes it). Run as any user; ethtool needs no
# privilege for these options. Nothing on the host is changed.
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 OUT [IFACE...]" >&2
    exit 2
fi
out=$1
shift
host="$out/host"
mkdir -p "$host" "$out/counters/0" "$out/counters/1" || exit 1
export LC_ALL=C

ifaces="$*"
if [ -z "$ifaces" ]; then
    for d in /sys/class/net/*; do
        [ -e "$d/device" ] && ifaces="$ifaces ${d##*/}"
    done
fi
if [ -z "$ifaces" ]; then
    echo "$0: no interface with a device under /sys/class/net: name them" >&2
    exit 2
fi

have() {
    if command -v "$1" >/dev/null 2>&1; then
        return 0
    fi
    echo "$0: $1 not found: $2 not written" >&2
    return 1
}

# run FILE CMD...: CMD's standard output into FILE, its errors on stderr with the file's
# name (ethtool -l of a driver without channels prints its header and fails: the
# header is kept, import-host reads it as one queue).
run() {
    f=$1
    shift
    "$@" >"$f" 2>"$f.err"
    rc=$?
    if [ -s "$f.err" ]; then
        sed "s|^|$f: |" "$f.err" >&2
    fi
    rm -f "$f.err"
    if [ $rc -ne 0 ]; then
        echo "$0: \`$*\` exited with $rc (output kept in $f)" >&2
    fi
}

# --- the dumps import-host reads ---
have lscpu "$host/lscpu" && run "$host/lscpu" lscpu
run "$host/proc-cpuinfo" cat /proc/cpuinfo
have sysctl "$host/sysctl-net.core" && run "$host/sysctl-net.core" sysctl net.core
if have ethtool "the ethtool-* files"; then
    for i in $ifaces; do
        for o in i g l c; do
            run "$host/ethtool-$o-$i" ethtool "-$o" "$i"
        done
        run "$host/ethtool-$i" ethtool "$i"
    done
fi
run "$host/proc-interrupts" cat /proc/interrupts
# The glob is expanded by the shell: every vector's two lists, smp_affinity_list first.
grep -H . /proc/irq/*/smp_affinity_list /proc/irq/*/effective_affinity_list \
    >"$host/irq-affinity" 2>/dev/null
have ip "$host/ip-link" && run "$host/ip-link" ip link show
run "$host/uname-r" uname -r

# --- two counter snapshots, for `irqsim advise OUT` ---
interval=${GATHER_INTERVAL:-5}
for k in 0 1; do
    c="$out/counters/$k"
    date +%s.%N >"$c/time"
    cat /proc/net/softnet_stat >"$c/softnet_stat"
    cat /proc/interrupts >"$c/interrupts"
    cat /proc/net/dev >"$c/net-dev"
    cat /proc/stat >"$c/stat"
    if command -v ethtool >/dev/null 2>&1; then
        for i in $ifaces; do
            run "$c/ethtool-S-$i" ethtool -S "$i"
        done
    fi
    [ $k -eq 0 ] && sleep "$interval"
done
echo "wrote $host (irqsim import-host $host) and $out/counters/0, $out/counters/1 (irqsim advise $out)" >&2
