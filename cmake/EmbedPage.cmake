# cmake -DPAGE=DIR/index.html -DSYMBOL=kName -DOUTPUT=FILE.inc -P EmbedPage.cmake
#
# Makes one self-contained HTML document of PAGE and writes it as a C++ array of bytes: each
# `<link rel="stylesheet" href="F">` becomes `<style>` with F's text, and each
# `<script src="F"></script>` becomes `<script>` with F's text (F relative to PAGE's folder), so
# that the page's sources stay real files a browser opens as they are. OUTPUT declares
#   inline constexpr char SYMBOL[] = {..., 0};   // the document, NUL-terminated
# A stylesheet or script that holds its own closing tag (in any case) or `<!--` could not be
# inlined as it is: that fails here.

foreach(required PAGE SYMBOL OUTPUT)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "EmbedPage.cmake: -D${required}=... is missing")
  endif()
endforeach()

get_filename_component(page_path "${PAGE}" ABSOLUTE)
get_filename_component(page_dir "${page_path}" DIRECTORY)
file(READ "${PAGE}" page)

# inline_files(TAG_REGEX OPEN CLOSE): replaces each tag of the page that TAG_REGEX matches (its
# first group the file's name) with OPEN, the file's text and CLOSE.
function(inline_files tag_regex open close)
  string(REGEX MATCHALL "${tag_regex}" tags "${page}")
  foreach(tag IN LISTS tags)
    string(REGEX REPLACE "${tag_regex}" "\\1" name "${tag}")
    file(READ "${page_dir}/${name}" body)
    string(TOLOWER "${body}" lower_body)
    string(REPLACE ">" "" close_start "${close}")
    foreach(breaking IN ITEMS "${close_start}" "<!--")
      string(FIND "${lower_body}" "${breaking}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${page_dir}/${name} holds '${breaking}', which breaks its element once inlined")
      endif()
    endforeach()
    string(REPLACE "${tag}" "${open}\n${body}${close}" page "${page}")
  endforeach()
  set(page "${page}" PARENT_SCOPE)
endfunction()

inline_files("<link rel=\"stylesheet\" href=\"([^\"]+)\">" "<style>" "</style>")
inline_files("<script src=\"([^\"]+)\"></script>" "<script>" "</script>")

string(HEX "${page}" hex)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${PAGE} by cmake/EmbedPage.cmake: edit the page's files, not this.\n"
  "inline constexpr char ${SYMBOL}[] = {${bytes}0};\n")
# Rewritten only when it changed, so that an unchanged page recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
