# Export ferro for find_package(ferro) from the build tree and from an install prefix. Both use
# <prefix>/lib/cmake/ferro, so CMAKE_PREFIX_PATH=<build dir> works like an installed prefix.
include(CMakePackageConfigHelpers)
set(FERRO_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ferro)
set(FERRO_CMAKE_BUILD_DIR ${CMAKE_BINARY_DIR}/${FERRO_CMAKE_INSTALL_DIR})

write_basic_package_version_file(${FERRO_CMAKE_BUILD_DIR}/ferroConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ferroConfig.cmake.in
    ${FERRO_CMAKE_BUILD_DIR}/ferroConfig.cmake INSTALL_DESTINATION ${FERRO_CMAKE_INSTALL_DIR})
export(EXPORT ferroTargets NAMESPACE ferro:: FILE ${FERRO_CMAKE_BUILD_DIR}/ferroTargets.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/FerroPlugin.cmake ${FERRO_CMAKE_BUILD_DIR}/FerroPlugin.cmake COPYONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/ferro_plugin.map ${FERRO_CMAKE_BUILD_DIR}/ferro_plugin.map COPYONLY)

install(EXPORT ferroTargets NAMESPACE ferro:: DESTINATION ${FERRO_CMAKE_INSTALL_DIR})
install(FILES ${FERRO_CMAKE_BUILD_DIR}/ferroConfig.cmake ${FERRO_CMAKE_BUILD_DIR}/ferroConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FerroPlugin.cmake ${PROJECT_SOURCE_DIR}/cmake/ferro_plugin.map
        DESTINATION ${FERRO_CMAKE_INSTALL_DIR})

# pkg-config, relocatable (paths relative to the .pc file).
configure_file(${PROJECT_SOURCE_DIR}/cmake/ferro.pc.in ${CMAKE_BINARY_DIR}/ferro.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ferro.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The documentation and the examples, for people who have only the install.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/plugin_api/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/embed ${PROJECT_SOURCE_DIR}/examples/plugin
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
