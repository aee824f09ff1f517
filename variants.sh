#!/usr/bin/env bash
# Temporary experiment (not committed): initial contact rows per shape.
set -u
deps=(-DWEFT_EXTRA_INCLUDE_DIRS="$PWD/.device-deps/include")
mk() {
  local name=$1
  rm -rf /tmp/v-$name && mkdir -p /tmp/v-$name
  tar c --exclude=./.baseline --exclude=./.device-deps --exclude=./build . | tar x -C /tmp/v-$name
  if [ $name = cap1 ]; then sed -i 's/  int contactCapacity = 4; /  int contactCapacity = 1; /' /tmp/v-$name/solver/rigid_model.h; grep -n "contactCapacity = " /tmp/v-$name/solver/rigid_model.h; fi
  cmake -S /tmp/v-$name -B /tmp/b-$name -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF "${deps[@]}" >/dev/null 2>&1
  ninja -C /tmp/b-$name -j16 weft >/tmp/b-$name.log 2>&1 || { tail -20 /tmp/b-$name.log; exit 1; }
}
start=$(date +%s); mk cap4; mk cap1; echo "builds $(( $(date +%s) - start )) s"
res=$OUT/variants.txt; : >$res
for rep in 1 2; do
  for s in cable_pile cable_y_junction cable_bundle_hysteresis cable_twist; do
    end=80; first=20; [ $s = cable_pile ] && end=50
    for v in cap4 cap1; do
      /tmp/b-$v/apps/weft run $s --device cuda --frames $end --format none --summary /tmp/s.json >/tmp/log 2>&1
      python3 -c "
import json,statistics;j=json.load(open('/tmp/s.json'));ms=j['frame_ms'][$first:$end]
c=j['contacts'];print('$s', '$v', round(1000*statistics.median(ms)/j['substeps_per_frame'],1), c['row_capacity'], c['largest_rows'], len(c['regrowths']), j['all_checks_pass'])" >>$res
    done
  done
done
cat $res
