#!/usr/bin/env bash
# Temporary experiment (not committed): base (e597aad), mid (base with margin 7 mm, no box test), new.
set -u
deps=(-DWEFT_EXTRA_INCLUDE_DIRS="$PWD/.device-deps/include")
rm -rf /tmp/v-mid && cp -r .baseline /tmp/v-mid
sed -i 's/float pairReuseMargin = 0.01f;/float pairReuseMargin = 0.007f;/' /tmp/v-mid/solver/rigid_model.h
sed -i 's/if (leafA >= 0 \&\& leafB >= 0 \&\&/if (false \&\& leafA >= 0 \&\& leafB >= 0 \&\&/' /tmp/v-mid/kernels/rigid_broad_phase.cuh
grep -c "pairReuseMargin = 0.007f" /tmp/v-mid/solver/rigid_model.h; grep -c "if (false &&" /tmp/v-mid/kernels/rigid_broad_phase.cuh
for v in base mid new; do
  src=/tmp/v-$v; [ $v = base ] && src=$PWD/.baseline; [ $v = new ] && src=$PWD
  cmake -S $src -B /tmp/c-$v -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=$([ $v = new ] && echo ON || echo OFF) "${deps[@]}" >/dev/null 2>&1
done
start=$(date +%s)
ninja -C /tmp/c-base -j5 weft >/tmp/l-base 2>&1 & ninja -C /tmp/c-mid -j5 weft >/tmp/l-mid 2>&1 &
ninja -C /tmp/c-new -j6 weft rigid_contacts_test solver_avbd_test exclusive_sum_test cable_run_test cable_scenes_test tuner_test >/tmp/l-new 2>&1 || tail -20 /tmp/l-new
wait; echo "builds $(( $(date +%s) - start )) s"
for t in rigid_contacts_test solver_avbd_test exclusive_sum_test cable_run_test cable_scenes_test tuner_test; do
  exe=$(find /tmp/c-new/tests -name $t -type f | head -1); $exe --gtest_brief=1 >$OUT/test-$t.log 2>&1; echo "$t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/test-$t.log | tr '\n' ' ')"
done
res=$OUT/variants.txt; : >$res
for rep in 1 2; do
  for s in cable_pile cable_y_junction cable_bundle_hysteresis cable_twist; do
    end=80; first=20; [ $s = cable_pile ] && end=50
    for v in base mid new; do
      /tmp/c-$v/apps/weft run $s --device cuda --frames $end --format none --summary /tmp/s.json >/tmp/log 2>&1
      python3 -c "
import json,statistics;j=json.load(open('/tmp/s.json'));ms=j['frame_ms'][$first:$end]
c=j['contacts'];print('$s', '$v', round(1000*statistics.median(ms)/j['substeps_per_frame'],1), c.get('pair_list_builds'), c['largest_rows'], j['all_checks_pass'])" >>$res
    done
  done
done
cat $res
W=/tmp/c-new/apps/weft; timeout 200 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum --csv --print-kernel-base demangled --launch-count 300 $W run cable_pile --device cuda --frames 1 --no-graph --format none > $OUT/ncu-pile.csv 2>/dev/null; echo ncu $?
