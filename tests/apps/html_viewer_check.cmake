# ctest HtmlViewer.<run>: opens the page a scene run wrote (--format html) in headless Chromium
# (software WebGL: SwiftShader), lets it play for half a second of virtual time (30 player ticks: a
# software-rendered frame of 4000 capsules takes about a second), and reads the
# status line the player keeps (apps/html_viewer.js): no script or console errors, the canvas not
# blank (luminance variance above MIN_VARIANCE), frames advancing. Then saves a screenshot of the
# run's last frame (page.html#frame=last).
# -D CHROMIUM=… -D PAGE=… -D SHOT=…png [-D MIN_VARIANCE=20]
if(NOT MIN_VARIANCE)
  set(MIN_VARIANCE 20)
endif()
if(NOT EXISTS ${PAGE})
  message(FATAL_ERROR "${PAGE} was not written (its scene run failed?)")
endif()
file(SIZE ${PAGE} bytes)
math(EXPR kib "${bytes} / 1024")
set(flags --headless --no-sandbox --disable-dev-shm-usage --use-angle=swiftshader
          --enable-unsafe-swiftshader --ignore-gpu-blocklist --window-size=1280,800
          --virtual-time-budget=500)
execute_process(COMMAND ${CHROMIUM} ${flags} --enable-logging=stderr --v=0 --dump-dom
                        file://${PAGE}
                OUTPUT_VARIABLE dom ERROR_VARIABLE log RESULT_VARIABLE rc TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium failed (${rc}):\n${log}")
endif()
string(REGEX MATCH
       "weft-status frames_shown=([0-9]+) max_frame=([0-9]+) variance=([0-9.]+) ready_ms=([0-9-]+) errors=([0-9]+)[^<]*"
       status "${dom}")
if(NOT status)
  message(FATAL_ERROR "the player never reported (did its script run?):\n${log}")
endif()
set(shown ${CMAKE_MATCH_1})
set(last ${CMAKE_MATCH_2})
set(variance ${CMAKE_MATCH_3})
set(ready ${CMAKE_MATCH_4})
set(errors ${CMAKE_MATCH_5})
message("${PAGE}: ${kib} KiB; ${status}")
string(REGEX MATCHALL "[^\n]*(Uncaught|CONSOLE\\([0-9]+\\)[^\n]*[Ee]rror)[^\n]*" console "${log}")
if(console)
  message(FATAL_ERROR "console errors:\n${console}")
endif()
if(NOT errors EQUAL 0)
  message(FATAL_ERROR "the page reported ${errors} errors: ${status}")
endif()
string(REGEX REPLACE "\\..*" "" variance_int "${variance}")
if(variance_int LESS MIN_VARIANCE)
  message(FATAL_ERROR "the canvas looks blank: luminance variance ${variance} < ${MIN_VARIANCE}")
endif()
if(last LESS 1)
  message(FATAL_ERROR "the player did not advance past frame 0 (${status})")
endif()
execute_process(COMMAND ${CHROMIUM} ${flags} --hide-scrollbars --screenshot=${SHOT}
                        "file://${PAGE}#frame=last"
                OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 300)
if(NOT rc EQUAL 0 OR NOT EXISTS ${SHOT})
  message(FATAL_ERROR "chromium could not save a screenshot (${rc})")
endif()
message("screenshot ${SHOT}")
