#!/usr/bin/env bash
set -uo pipefail
out=/tmp/p; rm -rf $out; mkdir -p $out
trap 'tar czf "$OUT/p.tgz" -C "$out" .' EXIT
cmake -S . -B /tmp/bl -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF -DCMAKE_CUDA_FLAGS=-lineinfo \
  -DWEFT_EXTRA_INCLUDE_DIRS="$PWD/.device-deps/include" -DWEFT_COMMIT="$(cat .device-deps/commit)" >$out/cfg.log 2>&1 || { tail $out/cfg.log; exit 1; }
ninja -C /tmp/bl -j16 weft >$out/build.log 2>&1 || { grep -E "error" $out/build.log | head; exit 1; }
ncu=/usr/local/cuda/bin/ncu
for sc in cable_y_junction cable_bundle_hysteresis; do
  timeout 200 $ncu --set full --import-source yes -k regex:solve_rigid_body_tile --launch-skip 40 --launch-count 1 -o $out/$sc \
    /tmp/bl/apps/weft run $sc --device cuda --frames 3 --no-graph --format none >$out/ncu-$sc.log 2>&1
  $ncu -i $out/$sc.ncu-rep --page details >$out/details-$sc.txt 2>&1
  $ncu -i $out/$sc.ncu-rep --page source --csv --print-source cuda >$out/source-$sc.csv 2>&1
  $ncu -i $out/$sc.ncu-rep --page source --csv --print-source sass >$out/sass-$sc.csv 2>&1
  rm -f $out/$sc.ncu-rep
done
ls -la $out
