#!/usr/bin/env bash
# Run a command in a fresh network namespace whose only interface is loopback (lo, 127.0.0.1).
#
# The sekai-ray tests start a local Ray cluster; inside this namespace nothing it opens can reach
# beyond this machine. As root it uses `unshare --net`; otherwise it also creates a user
# namespace (`unshare --user --map-root-user --net`), where the kernel allows that.
#
#   packages/sekai-ray/tests/run-in-netns.sh python -m pytest packages/sekai-ray/tests
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
for tool in unshare ip; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$0: '$tool' is not installed (Debian/Ubuntu: apt-get install util-linux iproute2)" >&2
        exit 2
    fi
done

if [ "$(id -u)" -eq 0 ]; then
    isolate=(unshare --net)
else
    isolate=(unshare --user --map-root-user --net)
fi
# The inner shell brings loopback up, then replaces itself with the command.
exec "${isolate[@]}" -- bash -c 'ip link set lo up && exec "$@"' run-in-netns "$@"
