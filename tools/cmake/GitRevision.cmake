# Run at every build (cmake -P): writes OUT with the current `git describe`, only when it changed,
# so provenance records the revision actually built without forcing rebuilds.
execute_process(COMMAND git describe --always --dirty --abbrev=12 WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rev)
  set(rev "unknown")
endif()
file(WRITE ${OUT}.tmp "#pragma once\n#define OMN_GIT_REVISION \"${rev}\"\n")
configure_file(${OUT}.tmp ${OUT} COPYONLY)
