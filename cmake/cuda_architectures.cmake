# Which NVIDIA GPUs the CUDA build makes code for (the README says it for users).
#
#  1. CMAKE_CUDA_ARCHITECTURES, else the CUDAARCHS environment variable, where given, in CMake's
#     spelling ("86", "89-real", "80-real;120-virtual"); "90" and "90a" mean machine code for sm_90a
#     (the wgmma and tensor-copy instructions of Hopper) plus compute_90 PTX.
#  2. Else the GPUs this machine has, as nvcc's -arch=native sees them (its __nvcc_device_query),
#     machine code for each (sm_90a for compute capability 9.0).
#  3. Else BWPROF_CUDA_DEFAULT_ARCHITECTURES: machine code for sm_80 (A100; the same code runs on
#     sm_86 A10/A40/RTX 30 and sm_89 L4/L40S/RTX 40), sm_89 (the FP8 matrix peak's file only),
#     sm_90a (H100/H200), sm_100 (B200/GB200; runs on sm_103 B300) and sm_120 (RTX 50, RTX PRO
#     Blackwell; runs on sm_121). No PTX: a GPU outside these gets bwprof's error naming the command
#     that builds for it, rather than minutes of driver JIT at its first launch.
#
# Each source is then compiled for the architectures its code differs on (bwprof_cuda_split):
#  - the general files once per major version: within one major version machine code for the
#    lowest minor runs on the higher ones (NVIDIA's binary compatibility), so 80-real;89-real
#    compiles them for sm_80 alone;
#  - the files whose code tests a minor version (BWPROF_CUDA_MINOR_SOURCES: FP8 from sm_89) for
#    every architecture of the list;
#  - the Hopper-only files (named *_sm90*.hip: wgmma, the tensor copy engine) for sm_90a alone, and
#    where the list has no sm_90a for its first architecture only (the host never launches them
#    then: BWPROF_HAVE_SM90A is off).
set(BWPROF_CUDA_DEFAULT_ARCHITECTURES "80-real;89-real;90a-real;100-real;120-real" CACHE STRING
    "CUDA architectures built when none is asked for and no GPU is found at configure time")

# The compute capabilities nvcc sees on this machine ("90", "80;86"), or "" where it sees none.
function(bwprof_cuda_native_archs out)
  set(_found "")
  get_filename_component(_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  find_program(BWPROF_NVCC_DEVICE_QUERY __nvcc_device_query HINTS "${_bin}" NO_DEFAULT_PATH)
  if(BWPROF_NVCC_DEVICE_QUERY)
    execute_process(COMMAND "${BWPROF_NVCC_DEVICE_QUERY}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _o ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 30)
    if(_rc EQUAL 0 AND _o MATCHES "^[0-9]+([,; ]+[0-9]+)*$")
      string(REGEX MATCHALL "[0-9]+" _found "${_o}")
    endif()
  endif()
  list(REMOVE_DUPLICATES _found)
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# Sets CMAKE_CUDA_ARCHITECTURES (the whole list, each entry NN[a]-real or NN[a]-virtual),
# BWPROF_HAVE_SM90A, and BWPROF_CUDA_ARCHITECTURES_FROM (where the list came from).
macro(bwprof_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    # (CMake caches CUDAARCHS there when it first configures a build folder: it then stays)
    set(_bw_asked "${CMAKE_CUDA_ARCHITECTURES}")
    if(CMAKE_CUDA_ARCHITECTURES STREQUAL "$ENV{CUDAARCHS}")
      set(BWPROF_CUDA_ARCHITECTURES_FROM "CUDAARCHS")
    else()
      set(BWPROF_CUDA_ARCHITECTURES_FROM "CMAKE_CUDA_ARCHITECTURES")
    endif()
  elseif(NOT "$ENV{CUDAARCHS}" STREQUAL "")  # CMake's own variable for a default, honoured here too
    set(_bw_asked "$ENV{CUDAARCHS}")
    set(BWPROF_CUDA_ARCHITECTURES_FROM "CUDAARCHS")
  else()
    bwprof_cuda_native_archs(_bw_native)
    execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code OUTPUT_VARIABLE _bw_known ERROR_QUIET)
    set(_bw_asked "")
    foreach(cc IN LISTS _bw_native)
      if(cc STREQUAL "90")
        list(APPEND _bw_asked 90a-real)
      elseif(_bw_known MATCHES "sm_${cc}")
        list(APPEND _bw_asked ${cc}-real)
      else()
        message(WARNING "bwprof: this machine's GPU (sm_${cc}) is newer than this nvcc knows; "
                        "building the default architectures instead")
        set(_bw_asked "")
        break()
      endif()
    endforeach()
    if(_bw_asked)
      set(BWPROF_CUDA_ARCHITECTURES_FROM "the GPUs of this machine")
    else()
      set(_bw_asked "${BWPROF_CUDA_DEFAULT_ARCHITECTURES}")
      set(BWPROF_CUDA_ARCHITECTURES_FROM "BWPROF_CUDA_DEFAULT_ARCHITECTURES (no GPU seen)")
    endif()
  endif()
  set(_bw_archs "")
  set(BWPROF_HAVE_SM90A OFF)
  foreach(a IN LISTS _bw_asked)
    if(a STREQUAL "90" OR a STREQUAL "90a")
      list(APPEND _bw_archs 90a-real 90-virtual)
    elseif(a MATCHES "^[0-9]+[af]?$")  # CMake's bare number: machine code and PTX
      list(APPEND _bw_archs ${a}-real ${a}-virtual)
    elseif(a MATCHES "^[0-9]+[af]?-(real|virtual)$")
      list(APPEND _bw_archs ${a})
    else()
      message(FATAL_ERROR "bwprof: CUDA architecture '${a}' (from ${BWPROF_CUDA_ARCHITECTURES_FROM}): expected "
                          "a number such as 86, 90a or 120, optionally -real or -virtual")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _bw_archs)
  if("90a-real" IN_LIST _bw_archs)
    set(BWPROF_HAVE_SM90A ON)
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${_bw_archs}")
  message(STATUS "bwprof: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (from ${BWPROF_CUDA_ARCHITECTURES_FROM})")
endmacro()

# The three lists of bwprof_cuda_split() for an architecture list `archs`: `general` (machine code
# of one minor version per major version, the lowest; PTX entries kept), `every` (all of `archs`) and
# `sm90a` (90a-real, else the first entry).
function(bwprof_cuda_arch_groups archs general sm90a)
  set(_g "")
  foreach(a IN LISTS archs)
    set(_keep TRUE)
    if(a MATCHES "^([0-9]+)-real$")  # plain machine code: covered by a lower minor of its major?
      set(_n ${CMAKE_MATCH_1})
      math(EXPR _major "${_n} / 10")
      foreach(b IN LISTS archs)
        if(b MATCHES "^([0-9]+)-real$")
          set(_m ${CMAKE_MATCH_1})
          math(EXPR _bmajor "${_m} / 10")
          if(_bmajor EQUAL _major AND _m LESS _n)
            set(_keep FALSE)
          endif()
        endif()
      endforeach()
    endif()
    if(_keep)
      list(APPEND _g ${a})
    endif()
  endforeach()
  if("90a-real" IN_LIST archs)
    set(_h 90a-real)
  else()
    list(GET archs 0 _h)
  endif()
  set(${general} "${_g}" PARENT_SCOPE)
  set(${sm90a} "${_h}" PARENT_SCOPE)
endfunction()
