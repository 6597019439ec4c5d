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
  # Same libstdc++ ABI as the host (Debian's libtorch uses the C++11 ABI).
  target_compile_definitions(${name} PRIVATE _GLIBCXX_USE_CXX11_ABI=1)
endfunction()
