# onnxport_add_op_pack(NAME SOURCES src...)
# Builds an op pack: a MODULE library linking only the SDK, with hidden visibility so that
# only the two entry points of ONNXPORT_OP_PACK are exported. Used in-tree for the built-in
# packs and by out-of-tree packs through find_package(onnxport).
function(onnxport_add_op_pack name)
  cmake_parse_arguments(PACK "" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  add_library(${name} MODULE ${PACK_SOURCES})
  target_link_libraries(${name} PRIVATE onnxport::sdk)
  set_target_properties(${name} PROPERTIES
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  if(PACK_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PACK_OUTPUT_DIRECTORY})
  endif()
  # Export exactly the two entry points: template instantiations from the standard library
  # must not leak out of a pack (and interpose between packs).
  set(map_file ${CMAKE_CURRENT_BINARY_DIR}/onnxport_op_pack.map)
  if(NOT EXISTS ${map_file})
    file(WRITE ${map_file} "{ global: onnxport_pack_info; onnxport_pack_register; local: *; };\n")
  endif()
  target_link_options(${name} PRIVATE "LINKER:--version-script=${map_file}")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${map_file})
  # Same libstdc++ ABI as the host (Debian's libtorch uses the C++11 ABI).
  target_compile_definitions(${name} PRIVATE _GLIBCXX_USE_CXX11_ABI=1)
endfunction()
