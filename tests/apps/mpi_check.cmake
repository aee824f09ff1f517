# `mpirun -np K weft ...` against one process (tests/apps/CMakeLists.txt, Mpi.*; docs/SCALING.md).
# -DWEFT=<weft> -DMPIEXEC=<mpirun> -DDEVICE=cpu|cuda -DWORK=<folder>. Checks, on DEVICE:
#   1. the worlds of an mpirun are bit for bit those of one process running the whole batch (each
#      world's state hash in the summaries), for 1, 2 and 3 ranks, a cable scene with a parameter
#      sweep and a cloth scene whose worlds differ in size and sit apart (--world-spacing); the
#      frames of the ranks land in one folder under distinct names;
#   2. a rank that fails gives a clear error and exit code 2 from every rank, and a rank that
#      crashes ends the job (no hang: each mpirun has a time limit);
#   3. too few worlds for the ranks, and a bad scene, are refused with one message;
#   4. `weft bench --worlds` across two ranks reports the overall, per-device and one-rank rates
#      and the scaling efficiency.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Open MPI refuses to start as root unless told (CI and the GPU machine run as root), and needs
# --oversubscribe for more ranks than cores.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_rmaps_base_oversubscribe} 1)
execute_process(COMMAND ${MPIEXEC} --version OUTPUT_VARIABLE version ERROR_VARIABLE version)
set(launcher_flags)
if(version MATCHES "Open MPI|OpenRTE")
  set(launcher_flags --oversubscribe)
endif()

function(fail)
  string(JOIN "" message ${ARGN})
  message(FATAL_ERROR "${message}")
endfunction()

# run(<name> <ranks: 0 = no mpirun> <expected exit, a regex> args...): output in WORK/<name>.log.
function(run name ranks expected)
  if(ranks EQUAL 0)
    set(command ${WEFT} ${ARGN})
  else()
    set(command ${MPIEXEC} ${launcher_flags} -np ${ranks} ${WEFT} ${ARGN})
  endif()
  execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  file(WRITE "${WORK}/${name}.log" "${command}\n--- stdout\n${out}\n--- stderr\n${err}")
  if(NOT "${code}" MATCHES "^(${expected})$")
    fail("${name}: exit '${code}', expected ${expected}\n${command}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# The summary's world_state_hashes as a list.
function(hashes summary result)
  file(READ "${WORK}/${summary}" json)
  string(JSON n LENGTH "${json}" world_state_hashes)
  set(list)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON h GET "${json}" world_state_hashes ${i})
    list(APPEND list ${h})
  endforeach()
  set(${result} "${list}" PARENT_SCOPE)
endfunction()

# 1. Bit for bit, two scenes.
set(cable cable_cantilever --worlds 5 --frames 4 --scene-option shear=1e4:1e5)
set(cloth cloth_fold --worlds 3 --frames 3 --scene-option cells=6,8 --world-spacing 2 0 0)
set(cable_format usda)
set(cloth_format obj)
foreach(case cable cloth)
  # A few frames: a check that judges the settled state may fail (exit 1), the same way for
  # every rank count (all_checks_pass is compared below).
  run(${case}_one 0 "0|1" run ${${case}} --device ${DEVICE} --format none
      --summary ${case}_one.json)
  file(READ "${WORK}/${case}_one.json" json)
  string(JSON passing_one GET "${json}" all_checks_pass)
  hashes(${case}_one.json one)
  list(REMOVE_DUPLICATES one)
  list(LENGTH one distinct)
  if(distinct LESS 2)
    fail("${case}: the worlds of the sweep should differ, but all hash alike")
  endif()
  hashes(${case}_one.json one)
  foreach(ranks 1 2 3)
    run(${case}_np${ranks} ${ranks} "0|1" run ${${case}} --device ${DEVICE} --format ${${case}_format}
        --out out_${case}_np${ranks} --summary ${case}_np${ranks}.json)
    hashes(${case}_np${ranks}.json many)
    if(NOT "${many}" STREQUAL "${one}")
      fail("${case}: ${ranks} ranks give other worlds than one process:\n  one process ${one}\n"
           "  ${ranks} ranks     ${many}")
    endif()
    if(ranks GREATER 1)
      file(READ "${WORK}/${case}_np${ranks}.json" json)
      string(JSON k GET "${json}" mpi ranks)
      string(JSON passing GET "${json}" all_checks_pass)
      if(NOT k EQUAL ranks OR NOT passing STREQUAL passing_one)
        fail("${case}: the summary of ${ranks} ranks says ${k} ranks, all_checks_pass ${passing} "
             "(one process: ${passing_one})")
      endif()
      if(NOT out MATCHES "ranks +${ranks} \\(MPI\\)" OR NOT out MATCHES "/[35] worlds pass")
        fail("${case}: the printed summary of ${ranks} ranks lacks its ranks or counts:\n${out}")
      endif()
    endif()
    message(STATUS "${case}: ${ranks} rank(s) bit for bit one process (${one})")
  endforeach()
endforeach()
# The ranks' frames side by side in one folder, named by their worlds: 3 ranks of the cable (worlds
# 0-0, 1-2 and 3-4 of 5), 2 of the cloth (0-0 and 1-2 of 3; an OBJ per frame).
foreach(file cable_cantilever.worlds0-0.usda cable_cantilever.worlds1-2.usda
             cable_cantilever.worlds3-4.usda)
  if(NOT EXISTS "${WORK}/out_cable_np3/${file}")
    file(GLOB listing RELATIVE "${WORK}/out_cable_np3" "${WORK}/out_cable_np3/*")
    fail("cable, 3 ranks: no ${file} among ${listing}")
  endif()
endforeach()
file(GLOB rank0 "${WORK}/out_cloth_np2/cloth_fold.worlds0-0*.obj")
file(GLOB rank1 "${WORK}/out_cloth_np2/cloth_fold.worlds1-2*.obj")
list(LENGTH rank0 n0)
list(LENGTH rank1 n1)
if(NOT n0 EQUAL 4 OR NOT n1 EQUAL 4)
  file(GLOB listing RELATIVE "${WORK}/out_cloth_np2" "${WORK}/out_cloth_np2/*")
  fail("cloth, 2 ranks: expected frames 0-3 of each rank, found ${listing}")
endif()

# 2. A failing rank and a crashing one.
set(ENV{WEFT_TEST_FAIL_RANK} 1)
run(fail_rank 2 2 run cable_y_junction --worlds 4 --frames 2 --device ${DEVICE} --format none)
unset(ENV{WEFT_TEST_FAIL_RANK})
if(NOT err MATCHES "rank 1 of 2 \\([^)]*\\): error: failure injected")
  fail("fail_rank: the error does not name rank 1:\n${err}")
endif()
set(ENV{WEFT_TEST_CRASH_RANK} 1)
execute_process(COMMAND ${MPIEXEC} ${launcher_flags} -np 2 ${WEFT} run cable_y_junction --worlds 4
                        --frames 200 --device ${DEVICE} --format none
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 120)
unset(ENV{WEFT_TEST_CRASH_RANK})
if(code EQUAL 0 OR code MATCHES "timeout")
  fail("crash_rank: a crashing rank should end the job with an error, got '${code}'\n${err}")
endif()
message(STATUS "crash_rank: the launcher ended the job (exit ${code})")

# 3. Refused before anything runs.
run(too_few 2 2 run cable_y_junction --worlds 1 --device ${DEVICE} --format none)
if(NOT err MATCHES "every rank: error: --worlds 1: 2 ranks need at least 2 worlds")
  fail("too_few: ${err}")
endif()
run(bad_scene 2 2 run nosuch --worlds 4 --device ${DEVICE})
if(NOT err MATCHES "every rank: error: unknown scene 'nosuch'")
  fail("bad_scene: ${err}")
endif()

# 4. bench --worlds across two ranks.
run(bench 2 0 bench --scenes cable_y_junction --worlds 1,2,4 --device ${DEVICE} --repetitions 2
    --json bench.json)
file(READ "${WORK}/bench.json" json)
string(JSON skipped GET "${json}" scenes 0 worlds 0 skipped)
string(JSON rate GET "${json}" scenes 0 worlds 2 world_substeps_per_s)
string(JSON one GET "${json}" scenes 0 worlds 2 one_rank world_substeps_per_s)
string(JSON efficiency GET "${json}" scenes 0 worlds 2 scaling_efficiency)
string(JSON ranks LENGTH "${json}" scenes 0 worlds 2 per_rank)
if(NOT skipped STREQUAL "fewer worlds than ranks" OR NOT ranks EQUAL 2 OR NOT rate GREATER 0 OR
   NOT one GREATER 0 OR NOT efficiency GREATER 0)
  fail("bench: ${json}")
endif()
run(bench_needs_worlds 2 2 bench --scenes cable_y_junction --device ${DEVICE})
if(NOT err MATCHES "give --worlds")
  fail("bench_needs_worlds: ${err}")
endif()
message(STATUS "bench: 4 worlds over 2 ranks ${rate} world-substeps/s, one rank alone ${one}, "
               "efficiency ${efficiency}")
