#!/usr/bin/env bash
# What the durability mechanism costs: one `copyq eval` that adds an item, with and without the
# `unload(tab)` that saves the tab at once, on tabs of 200 and 5,000 items, side by side in one run
# against a private headless CopyQ. Prints median and max milliseconds of N runs each.
set -euo pipefail
N=${N:-15}
T=$(mktemp -d); trap 'copyq exit >/dev/null 2>&1 || true; kill $XPID 2>/dev/null || true; rm -rf "$T"' EXIT
mkdir -p "$T/config" "$T/data" "$T/run"; chmod 700 "$T/run"
Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp 3>"$T/display" 2>/dev/null & XPID=$!
until [[ -s "$T/display" ]]; do sleep 0.05; done
export DISPLAY=":$(cat "$T/display")" QT_QPA_PLATFORM=xcb COPYQ_SESSION_NAME="bench$$" \
       COPYQ_SETTINGS_PATH="$T/config" XDG_DATA_HOME="$T/data" XDG_RUNTIME_DIR="$T/run"
copyq >/dev/null 2>&1 &
until copyq eval -- 1 >/dev/null 2>&1; do sleep 0.05; done
copyq eval -- "config('maxitems', 10000)" >/dev/null
for n in 200 5000; do
  copyq eval -- "tab('b$n'); for (var i = 0; i < $n; ++i) add('item ' + i); unload('b$n')" >/dev/null
done
ms() { local s e; s=$(date +%s%N); copyq eval -- "$1" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
stats() { sort -n | awk '{a[NR]=$1} END {printf "median %4d ms  max %4d ms", a[int((NR+1)/2)], a[NR]}'; }
printf '%-28s %-12s %s\n' "operation ($N runs)" "tab items" "copyq eval wall time"
for n in 200 5000; do
  for variant in plain unload; do
    script="tab('b$n'); add('x'); remove(0);"
    [[ $variant == unload ]] && script="$script unload('b$n');"
    times=$(for _ in $(seq "$N"); do ms "$script"; done)
    printf '%-28s %-12s %s\n' "add+remove, $variant" "$n" "$(stats <<<"$times")"
  done
done
