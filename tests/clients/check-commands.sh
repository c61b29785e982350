#!/bin/sh
# Real-tool check of the commands.sh `irqsim tune` writes: every command parsed by the
# real ethtool, sysctl and the kernel's sysfs, against veth interfaces in a network
# namespace of their own (nothing on the host is changed).
#
# Usage (as root, with ethtool, iproute2 and procps installed, e.g. Debian's):
#   sh tests/clients/check-commands.sh DIR/commands.sh
#
# For each line of the script:
# - `IF_x=NAME`: a veth called NAME is created in the namespace, with 64 queues each
#   way (so that rx-K paths exist), and the variable is set;
# - `ethtool ...`: run in the namespace. A parser error of ethtool's own ("unknown
#   parameter", "bad command line argument", "no value for parameter", "invalid value",
#   a usage message) fails the check; an error from the driver or the kernel
#   ("Operation not supported", "netlink error: ..." such as a channel count above
#   veth's maximum) is accepted: veth has no coalescing, rings or channels to set;
# - `sysctl -w NAME=VALUE`: NAME must exist in the running kernel (read with
#   `sysctl -n NAME` outside the namespace: net.core's budget sysctls exist only in the
#   initial namespace; nothing is written) and VALUE must be an integer;
# - `echo VALUE > "/sys/class/net/$IF_x/..."`: written in the namespace to the veth's
#   file; a missing file (a wrong attribute or path) fails, a refusal of the value by
#   veth (EOPNOTSUPP, EINVAL: no NAPI to thread, a mask of CPUs this machine lacks) is
#   accepted;
# - `echo LIST > "/proc/irq/$(irq_of "VECTOR")/smp_affinity_list"`: veth has no
#   interrupt, so LIST must be a CPU list (`0`, `0-3`, `0,2`), the irq_of function must
#   run on this host's /proc/interrupts, and /proc/irq/*/smp_affinity_list must exist
#   (nothing is written);
# - comments, blank lines, `set -e`, `#!/bin/sh` and the irq_of definition are skipped;
#   any other line fails the check.
# Exit 0 when every line passed, 1 otherwise (each failure printed), 2 on bad usage.
set -u

script=${1:?usage: check-commands.sh COMMANDS.SH}
[ -r "$script" ] || { echo "check-commands: cannot read $script" >&2; exit 2; }
ns="irqsim-check-$$"
ip netns add "$ns" || { echo "check-commands: cannot create a network namespace (root?)" >&2; exit 2; }
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
fail=0
n=0
vars=""
bad() {
    echo "FAIL line $n: $1" >&2
    echo "  $line" >&2
    fail=1
}
# The line with its $IF_x / ${IF_x} variables replaced by their values.
subst() {
    out=$1
    for v in $vars; do
        name=${v%%=*}
        val=${v#*=}
        out=$(printf '%s' "$out" | sed -e "s/\${$name}/$val/g" -e "s/\$$name\\b/$val/g")
    done
    printf '%s' "$out"
}
irq_of() { awk -v n="$1" '$NF == n { sub(":", "", $1); print $1 }' /proc/interrupts; }
while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case $line in
    '' | '#'* | 'set -e') continue ;;
    'irq_of() '*) continue ;;
    IF_*=*)
        name=${line%%=*}
        val=${line#*=}
        case $val in
        *[!A-Za-z0-9_.-]* | '') bad "interface name \`$val\` is not a plain word"; continue ;;
        esac
        if ! ip -n "$ns" link add "$val" numtxqueues 64 numrxqueues 64 type veth \
            peer name "p$n" numtxqueues 64 numrxqueues 64 2>/tmp/check-commands.$$; then
            bad "cannot create veth $val: $(cat /tmp/check-commands.$$)"
            continue
        fi
        ip -n "$ns" link set "$val" up
        vars="$vars $name=$val"
        ;;
    ethtool\ *)
        cmd=$(subst "$line" | tr -d '"')
        # shellcheck disable=SC2086
        err=$(ip netns exec "$ns" $cmd 2>&1 >/dev/null)
        case $err in
        *'unknown parameter'* | *'bad command line argument'* | *'no value for parameter'* | \
            *'invalid value'* | *'Usage:'* | *'ethtool: bad'* | *'is not a valid'*)
            bad "ethtool refused its syntax: $err" ;;
        *) [ -n "$err" ] && echo "ok (the driver refused the value on veth: $err): $cmd" || echo "ok: $cmd" ;;
        esac
        ;;
    'sysctl -w '*)
        kv=${line#sysctl -w }
        key=${kv%%=*}
        val=${kv#*=}
        if ! sysctl -n "$key" >/dev/null 2>&1; then
            bad "no sysctl $key in this kernel"
        else
            case $val in
            '' | *[!0-9]*) bad "$key: value \`$val\` is not an integer" ;;
            *) echo "ok (exists; not written): sysctl -w $key=$val" ;;
            esac
        fi
        ;;
    'echo '*' > "/sys/class/net/'*)
        cmd=$(subst "$line")
        path=${cmd#*> \"}
        path=${path%\"}
        val=${cmd#echo }
        val=${val%% >*}
        if ! ip netns exec "$ns" test -e "$path"; then
            bad "no such file in the namespace: $path"
        else
            err=$(ip netns exec "$ns" sh -c "echo $val > '$path'" 2>&1)
            [ -n "$err" ] && echo "ok (veth refused the value: $err): $cmd" || echo "ok: $cmd"
        fi
        ;;
    'echo '*' > "/proc/irq/$(irq_of "'*'")/smp_affinity_list"')
        val=${line#echo }
        val=${val%% >*}
        if ! printf '%s' "$val" | grep -Eq '^[0-9]+([-,][0-9]+)*$'; then
            bad "\`$val\` is not a CPU list"
        elif ! irq_of nothing >/dev/null; then
            bad "irq_of does not run on /proc/interrupts"
        elif ! ls /proc/irq/*/smp_affinity_list >/dev/null 2>&1; then
            bad "no /proc/irq/N/smp_affinity_list on this kernel"
        else
            echo "ok (CPU list; not written): $line"
        fi
        ;;
    *) bad "not a command this check knows" ;;
    esac
done <"$script"
rm -f /tmp/check-commands.$$
[ $fail -eq 0 ] && echo "check-commands: every line of $script passed"
exit $fail
