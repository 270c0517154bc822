# The layers of docs/architecture.md and what each may use: the one table that both checks read,
# the link check (drk_check_layer_links(), run at the end of configuration: a forbidden link fails
# it) and the include check (cmake/CheckLayerIncludes.cmake, the test layer_includes).
#
# A unit is one part of the system: actors/<role>, kernels/<part>, tools/<tool> and tests/<kind>
# are units of their own, any other top-level folder is one unit. A unit may use itself and the
# units of the layers its layer names below; only tools and tests name themselves, so that no actor
# uses another, nor one part of kernels another. A test (a drk_test target, a *_test source file)
# may also use tests/.

set(DRK_LAYER_USES_base "")
set(DRK_LAYER_USES_messages "")
set(DRK_LAYER_USES_abi "")
set(DRK_LAYER_USES_kernels base messages)
set(DRK_LAYER_USES_judging base messages)
set(DRK_LAYER_USES_runtime base messages)
set(DRK_LAYER_USES_training base messages runtime)
set(DRK_LAYER_USES_actors base messages abi kernels judging runtime training)
set(DRK_LAYER_USES_tools base messages abi kernels judging runtime training actors tools)
set(DRK_LAYER_USES_tests base messages abi kernels judging runtime training actors tools tests)

# Headers a layer may not include although their unit is one it uses (a regular expression per
# header): the runtime carries the application's messages as typed payloads and knows only its own
# schema (messages/envelope.capnp).
set(DRK_LAYER_FORBIDS_runtime "messages/drk\\.capnp")

# drk_unit_of(PATH OUT): the unit of PATH, a file's path relative to the source root.
function(drk_unit_of path out)
  if(path MATCHES "^(actors|kernels|tools|tests)/([^/]+)/")
    set(${out} "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}" PARENT_SCOPE)
  else()
    string(REGEX MATCH "^[^/]+" top "${path}")
    set(${out} "${top}" PARENT_SCOPE)
  endif()
endfunction()

# drk_layer_of(UNIT OUT): the layer of UNIT; empty for a folder that is no layer.
function(drk_layer_of unit out)
  if(unit STREQUAL "kernels/abi")
    set(layer abi)
  else()
    string(REGEX MATCH "^[^/]+" layer "${unit}")
  endif()
  if(NOT DEFINED DRK_LAYER_USES_${layer})
    set(layer "")
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# drk_layer_check(UNIT USED IS_TEST WHAT LIST_VAR): appends WHAT, a line that names the use, to the
# variable named LIST_VAR when UNIT may not use USED.
function(drk_layer_check unit used is_test what list_var)
  drk_layer_of("${unit}" layer)
  drk_layer_of("${used}" used_layer)
  set(allowed ${DRK_LAYER_USES_${layer}})
  if(is_test)
    list(APPEND allowed tests)
  endif()
  if(NOT unit STREQUAL used AND NOT used_layer IN_LIST allowed)
    set(${list_var} "${${list_var}}\n  ${what}" PARENT_SCOPE)
  endif()
endfunction()

# drk_layer_report(TEXT KIND): fails naming each use of TEXT (what drk_layer_check built), if any;
# KIND says what they are ("Links").
function(drk_layer_report text kind)
  if(text)
    message(FATAL_ERROR "${kind} that docs/architecture.md's layers forbid (cmake/DrkLayers.cmake):${text}")
  endif()
endfunction()

# Every target defined under DIR and its subdirectories, into OUT.
function(drk_targets_under dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    drk_targets_under("${subdir}" below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The unit of a target defined in this project, into OUT; empty for one defined at the root
# (cmake/Dependencies.cmake's wrappers of libraries from outside) or imported.
function(drk_target_unit target out)
  set(unit "")
  get_target_property(imported ${target} IMPORTED)
  if(NOT imported)
    get_target_property(dir ${target} SOURCE_DIR)
    file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${dir}")
    # The trailing slash makes the folder's own name a folder ("actors/evaluator/").
    if(relative AND NOT relative MATCHES "^\\.\\.")
      drk_unit_of("${relative}/" unit)
    endif()
  endif()
  set(${out} "${unit}" PARENT_SCOPE)
endfunction()

# drk_check_layer_links(): fails the configuration when a target links a target of the project
# that its layer may not use, naming both.
function(drk_check_layer_links)
  drk_targets_under("${PROJECT_SOURCE_DIR}" targets)
  set(violations "")
  foreach(target IN LISTS targets)
    drk_target_unit(${target} unit)
    if(NOT unit)
      continue()
    endif()
    get_target_property(is_test ${target} DRK_TEST)
    get_target_property(deps ${target} LINK_LIBRARIES)
    foreach(dep IN LISTS deps)
      if(NOT TARGET "${dep}")
        continue()
      endif()
      get_target_property(aliased ${dep} ALIASED_TARGET)
      if(aliased)
        set(dep ${aliased})
      endif()
      drk_target_unit(${dep} used)
      if(NOT used)
        continue()
      endif()
      drk_layer_check("${unit}" "${used}" "${is_test}" "${target} (${unit}) links ${dep} (${used})" violations)
    endforeach()
  endforeach()
  drk_layer_report("${violations}" Links)
endfunction()
