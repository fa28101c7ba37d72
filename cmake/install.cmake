# install.cmake - `cmake --install`: the static and shared libgcut, gcut.h, the gcut command,
# the licence, a pkg-config file (gcut.pc) and a CMake package (find_package(gcut) ->
# gcut::gcut, gcut::gcut_static). Included from the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(GCUT_INSTALL_TARGETS gcut)
if(GCUT_BUILD_SHARED)
    list(APPEND GCUT_INSTALL_TARGETS gcut_shared)
endif()
install(TARGETS ${GCUT_INSTALL_TARGETS} EXPORT gcutTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gcut_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET gcut_ffmpeg)
    # Found by libgcut relative to the gcut binary or at this absolute place (ffmpeg_load.c).
    install(TARGETS gcut_ffmpeg LIBRARY DESTINATION ${GCUT_MODULE_INSTALL_DIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/gcut.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/licenses/gcut)

set(GCUT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gcut)
install(EXPORT gcutTargets NAMESPACE gcut:: DESTINATION ${GCUT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gcutConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/gcutConfig.cmake
                              INSTALL_DESTINATION ${GCUT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gcutConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gcutConfig.cmake ${PROJECT_BINARY_DIR}/gcutConfigVersion.cmake
        DESTINATION ${GCUT_CMAKE_DIR})

# pkg-config: `pkg-config --cflags --libs gcut` links the shared library; with --static the
# libraries the static one needs come too. The prefix is found from the .pc file's own place
# (${pcfiledir}), so a tree installed with `cmake --install --prefix DIR` or moved works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(GCUT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
    file(RELATIVE_PATH GCUT_PC_UP "/gcut-root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/gcut-root")
    string(REGEX REPLACE "/$" "" GCUT_PC_UP "${GCUT_PC_UP}")
    set(GCUT_PC_PREFIX "\${pcfiledir}/${GCUT_PC_UP}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(GCUT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(GCUT_PC_LIBDIR "\${exec_prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(GCUT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(GCUT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(GCUT_PC_LIBS_PRIVATE "")
if(PNG_FOUND)
    string(APPEND GCUT_PC_LIBS_PRIVATE " -lpng")
endif()
if(JPEG_FOUND)
    string(APPEND GCUT_PC_LIBS_PRIVATE " -ljpeg")
endif()
if(OpenMP_C_FOUND)
    string(APPEND GCUT_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
if(GCUT_HAVE_CUDA)
    string(APPEND GCUT_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lpthread -lstdc++")
endif()
string(APPEND GCUT_PC_LIBS_PRIVATE " -lpthread")
if(CMAKE_DL_LIBS)
    string(APPEND GCUT_PC_LIBS_PRIVATE " -l${CMAKE_DL_LIBS}")
endif()
if(GCUT_LIBM)
    string(APPEND GCUT_PC_LIBS_PRIVATE " -lm")
endif()
string(STRIP "${GCUT_PC_LIBS_PRIVATE}" GCUT_PC_LIBS_PRIVATE)
configure_file(${PROJECT_SOURCE_DIR}/cmake/gcut.pc.in ${PROJECT_BINARY_DIR}/gcut.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gcut.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
