# A downstream project (copied to CMakeLists.txt by cmake_package.sh): find_package(kdistill) from
# an installed prefix (CMAKE_PREFIX_PATH).
cmake_minimum_required(VERSION 3.16)
project(kdistill_app LANGUAGES C CXX)
find_package(kdistill 0.1 REQUIRED)
add_executable(app_shared app.c)
target_link_libraries(app_shared PRIVATE kdistill::kdistill)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE kdistill::static)
add_executable(app_cxx app.cpp)
target_link_libraries(app_cxx PRIVATE kdistill::kdistill)
