// The dashboard's page (GET / of the dashboard service, dashboard_service.h): one self-contained
// HTML document, its scripts and styles inline, that reads /api/snapshot once and then follows
// /api/events (docs/dashboard.md). Nothing is fetched from the internet.
//
// Built from tools/observe/dashboard/ (index.html, dashboard.css, dashboard.js) at build time by
// cmake/EmbedPage.cmake, which inlines the stylesheet and the script into the document.
//
// Thread-safety: the text is a constant of the program.
#pragma once

#include <string_view>

namespace drk::observe {

std::string_view dashboard_page_html();

}  // namespace drk::observe
