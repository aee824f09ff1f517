# Writes ${OUT} with the git commit of the source tree, at build time (so a rebuild after a new
# commit reports the new commit). Rewrites the file only when the text changes.
# WEFT_COMMIT (set by .ci/gpu-suite from .device-deps/commit) wins: the GPU machine's copy may
# carry a stale .git whose HEAD is not the commit that was shipped.
if(WEFT_COMMIT)
  set(commit "${WEFT_COMMIT}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT commit AND EXISTS ${SOURCE_DIR}/.device-deps/commit)
  # A copy without .git (the GPU machine): the commit recorded by .ci/device-pack.
  file(STRINGS ${SOURCE_DIR}/.device-deps/commit commit LIMIT_COUNT 1)
endif()
if(NOT commit)
  set(commit "unknown")
elseif(dirty)
  set(commit "${commit}-dirty")
endif()
set(text "#pragma once\n#define WEFT_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
