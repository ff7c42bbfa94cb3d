# Warning and sanitizer flags shared by every trainsim target.
add_library(trainsim_flags INTERFACE)
add_library(trainsim::flags ALIAS trainsim_flags)
target_compile_options(trainsim_flags INTERFACE -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local> -Wnon-virtual-dtor)
if(TRAINSIM_WERROR)
  target_compile_options(trainsim_flags INTERFACE -Werror)
endif()
if(TRAINSIM_SANITIZE)
  target_compile_options(trainsim_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(trainsim_flags INTERFACE -fsanitize=address,undefined)
endif()
if(TRAINSIM_FUZZ)
  # libFuzzer's coverage in every module; the fuzz executables link libFuzzer itself (tests/fuzz).
  target_compile_options(trainsim_flags INTERFACE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(trainsim_flags INTERFACE -fsanitize=address,undefined)
endif()

# trainsim_add_library(NAME ALIAS SOURCES... DEPS ...): a module library with public headers under include/.
function(trainsim_add_library name alias)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  add_library(${alias} ALIAS ${name})
  # -fPIC: the Python module (simulator/python), a shared object, links these libraries too.
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE trainsim::flags ${ARG_PRIVATE_DEPS})
endfunction()
