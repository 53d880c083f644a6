# The model-code fingerprint: SHA-256 over "path SHA-256" lines, sorted by path, of every source
# that can change a number omn-audit writes: src/ and include/omn/ (model, rows and token sets,
# scorer, divergence, bootstrap, ops, profile statistics, trainer, readers, output formatting)
# except src/report and include/omn/report (figures and pages: they draw numbers, they do not make
# them); the command line (tools/omn-audit: option defaults, the OpenBLAS kernel choice); and the
# presets (configs/presets: a preset sets the model's arithmetic).
#   include(Fingerprint.cmake); omn_code_fingerprint_files(FILES ROOT); omn_code_fingerprint(HASH ROOT)
#   cmake -DROOT=<source tree> -P tools/cmake/Fingerprint.cmake   prints the fingerprint (tests)
function(omn_code_fingerprint_files out root)
  file(GLOB_RECURSE files ${root}/src/*.cpp ${root}/src/*.h ${root}/include/omn/*.h ${root}/tools/omn-audit/*.cpp
       ${root}/tools/omn-audit/*.h ${root}/configs/presets/*.json)
  list(FILTER files EXCLUDE REGEX "/(src|include/omn)/report/")
  list(SORT files)
  set(${out} ${files} PARENT_SCOPE)
endfunction()

function(omn_code_fingerprint out root)
  omn_code_fingerprint_files(files ${root})
  set(all "")
  foreach(f ${files})
    file(RELATIVE_PATH rel ${root} ${f})
    file(SHA256 ${f} h)
    string(APPEND all "${rel} ${h}\n")
  endforeach()
  string(SHA256 fingerprint "${all}")
  set(${out} ${fingerprint} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED ROOT)
  omn_code_fingerprint(h ${ROOT})
  message("${h}")
endif()
