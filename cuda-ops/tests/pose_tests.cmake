# The pose operators' native tests (VoteAggregate, KabschSolver, PoseSolve). Include from the top-level
# CMakeLists.txt inside `if(PVN3D_BUILD_TESTS)`, after enable_testing():
#   include("${CMAKE_CURRENT_SOURCE_DIR}/cuda-ops/tests/pose_tests.cmake")
# Each test program has its own independent reference (test_pose_solve_reference.h) and links only
# pvn3d_ops. gpu_test_pose exits 77 (skipped) without a CUDA device or in a CPU-only library.
set(_pvn3d_pose_test_dir "${CMAKE_CURRENT_LIST_DIR}")
foreach(_t test_vote_aggregate test_kabsch_solver test_pose_solve gpu_test_pose)
  add_executable(pvn3d_${_t} "${_pvn3d_pose_test_dir}/${_t}.cpp")
  target_link_libraries(pvn3d_${_t} PRIVATE pvn3d_ops)
  target_include_directories(pvn3d_${_t} PRIVATE "${_pvn3d_pose_test_dir}" "${_pvn3d_pose_test_dir}/..")
  target_compile_options(pvn3d_${_t} PRIVATE -Wall -Wextra -ffp-contract=off)
  add_test(NAME pvn3d_${_t} COMMAND pvn3d_${_t})
  set_tests_properties(pvn3d_${_t} PROPERTIES TIMEOUT 300)
endforeach()
set_tests_properties(pvn3d_gpu_test_pose PROPERTIES SKIP_RETURN_CODE 77)
