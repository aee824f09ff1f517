# ctest PythonPackage.PipInstallAndPytest: `pip install` of the source tree SOURCE_DIR into the
# environment of PYTHON (its build kept in WORK/build, so a second run rebuilds only what changed),
# then pytest tests/python from WORK, so that `import weft` finds the installed module.
# -D PYTHON=… -D SOURCE_DIR=… -D WORK=… [-D CMAKE_DEFINES=NAME=VALUE|NAME=VALUE…] (CMake
# definitions for the module's build; one with an empty value is left out).
function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc})")
  endif()
endfunction()
file(MAKE_DIRECTORY ${WORK})
set(defines)
string(REPLACE "|" ";" definitions "${CMAKE_DEFINES}")
foreach(definition ${definitions})
  if(NOT definition MATCHES "=$")
    list(APPEND defines -C cmake.define.${definition})
  endif()
endforeach()
message("pip install ${SOURCE_DIR} (the C++ libraries and the module; minutes on a first build)")
step("pip install" ${PYTHON} -m pip install --no-build-isolation --no-deps
     --disable-pip-version-check -C build-dir=${WORK}/build ${defines} ${SOURCE_DIR})
step("import weft" ${PYTHON} -c
     "import weft; print('weft', weft.__version__, weft.commit, 'from', weft.__file__)")
step("pytest" ${PYTHON} -m pytest -q -p no:cacheprovider ${SOURCE_DIR}/tests/python)
