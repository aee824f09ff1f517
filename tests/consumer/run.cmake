# ctest InstalledPackage.ConsumerBuildsAndRuns: installs the build BUILD_DIR into WORK/prefix,
# configures and builds tests/consumer against it (find_package(Weft)) and runs the program.
# -D BUILD_DIR=… -D SOURCE_DIR=<tests/consumer> -D WORK=… -D GENERATOR=…
file(REMOVE_RECURSE ${WORK})
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc})")
  endif()
endfunction()
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
step("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK}/build -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK}/prefix)
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/build)
step("run the consumer" ${WORK}/build/free_fall)
